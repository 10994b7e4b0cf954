/**
 * Confirmation with a native modal `<dialog>`: focus is trapped inside and returns to the
 * button that opened it, Escape cancels. Resolves true only for the confirm button.
 */
export function confirmWith(dialog, keyLabel) {
  for (const el of dialog.querySelectorAll('.dialog-key'))
    el.textContent = keyLabel ? `“${keyLabel}”` : 'this key';
  dialog.returnValue = '';
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'confirm'), { once: true });
    dialog.showModal();
  });
}
