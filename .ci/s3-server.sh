#!/usr/bin/env bash
# A one-node OpenStack Swift with its S3 API (s3api + tempauth) on 127.0.0.1, for the storage
# suites and for trying the S3 driver by hand. Needs Debian's swift packages (.ci/run installs
# them). Access key `test:tester`, secret `testing`, path-style, region us-east-1.
#   bash .ci/s3-server.sh start [DIR]   # prints the S3 endpoint; DIR defaults to /tmp/vt-swift
#   bash .ci/s3-server.sh stop  [DIR]
set -euo pipefail
cmd="${1:-start}"
dir="${2:-${S3_SERVER_DIR:-/tmp/vt-swift}}"
port="${S3_SERVER_PORT:-8089}"
mc_port="${S3_SERVER_MEMCACHED_PORT:-11219}"
endpoint="http://127.0.0.1:${port}"

stop() {
  if [ -d "$dir/run" ]; then
    for f in "$dir"/run/*.pid; do
      [ -e "$f" ] || continue
      kill "$(cat "$f")" 2>/dev/null || true
      rm -f "$f"
    done
  fi
}

if [ "$cmd" = stop ]; then stop; exit 0; fi
[ "$cmd" = start ] || { echo "usage: $0 start|stop [DIR]" >&2; exit 2; }

if curl -fsS "$endpoint/healthcheck" >/dev/null 2>&1; then
  echo "$endpoint"
  exit 0
fi
command -v swift-proxy-server >/dev/null && command -v memcached >/dev/null || { echo "swift or memcached is not installed" >&2; exit 1; }

stop
rm -rf "$dir"
mkdir -p "$dir"/{conf,run,log,node/d1}
# Swift reads its hash prefix and suffix from this one fixed path.
if [ ! -s /etc/swift/swift.conf ]; then
  mkdir -p /etc/swift
  printf '[swift-hash]\nswift_hash_path_suffix = vt-suffix\nswift_hash_path_prefix = vt-prefix\n[storage-policy:0]\nname = Policy-0\ndefault = yes\n' >/etc/swift/swift.conf
fi
user="$(id -un)"
chown -R "$user" "$dir"

common() { # $1 = server kind, $2 = port
  cat <<CONF
[DEFAULT]
devices = $dir/node
mount_check = false
bind_ip = 127.0.0.1
bind_port = $2
workers = 0
user = $user
swift_dir = $dir/conf
log_name = $1
log_facility = LOG_LOCAL0
log_level = WARNING

[pipeline:main]
pipeline = $1-server

[app:$1-server]
use = egg:swift#$1
CONF
}
common object 6210 >"$dir/conf/object-server.conf"
common container 6211 >"$dir/conf/container-server.conf"
common account 6212 >"$dir/conf/account-server.conf"
cat >"$dir/conf/proxy-server.conf" <<CONF
[DEFAULT]
bind_ip = 127.0.0.1
bind_port = $port
workers = 0
user = $user
swift_dir = $dir/conf
log_level = WARNING

[pipeline:main]
pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats s3api tempauth copy slo dlo proxy-logging proxy-server

[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true

[filter:s3api]
use = egg:swift#s3api
location = us-east-1
dns_compliant_bucket_names = true

[filter:tempauth]
use = egg:swift#tempauth
user_test_tester = testing .admin

[filter:cache]
use = egg:swift#memcache
memcache_servers = 127.0.0.1:$mc_port

[filter:catch_errors]
use = egg:swift#catch_errors
[filter:gatekeeper]
use = egg:swift#gatekeeper
[filter:healthcheck]
use = egg:swift#healthcheck
[filter:proxy-logging]
use = egg:swift#proxy_logging
[filter:listing_formats]
use = egg:swift#listing_formats
[filter:copy]
use = egg:swift#copy
[filter:slo]
use = egg:swift#slo
[filter:dlo]
use = egg:swift#dlo
CONF

cd "$dir/conf"
for kind in object:6210 container:6211 account:6212; do
  name="${kind%%:*}"
  p="${kind##*:}"
  swift-ring-builder "$name.builder" create 6 1 1 >/dev/null
  swift-ring-builder "$name.builder" add "r1z1-127.0.0.1:$p/d1" 1 >/dev/null
  swift-ring-builder "$name.builder" rebalance >/dev/null
done

# tempauth keeps its tokens in memcached.
memcached -u "$user" -l 127.0.0.1 -p "$mc_port" -m 32 -U 0 >"$dir/log/memcached.log" 2>&1 &
echo $! >"$dir/run/memcached.pid"
for server in object container account proxy; do
  setsid "swift-$server-server" "$dir/conf/$server-server.conf" --verbose >"$dir/log/$server.log" 2>&1 &
  echo $! >"$dir/run/$server.pid"
done
for _ in $(seq 1 120); do
  curl -fsS "$endpoint/healthcheck" >/dev/null 2>&1 && break
  sleep 0.5
done
curl -fsS "$endpoint/healthcheck" >/dev/null || { echo "swift did not start; logs in $dir/log" >&2; tail -n 20 "$dir"/log/*.log >&2; exit 1; }
echo "$endpoint"
