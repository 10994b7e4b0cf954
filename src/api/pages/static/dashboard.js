import { startShell } from './shell.js';

/** The dashboard is drawn on the server; its script only fills the top bar and wires Log out. */
void startShell();
