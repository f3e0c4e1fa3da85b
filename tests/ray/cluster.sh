# Sourced by tests/ray/batch_ray.sh and bench/batch.sh: a real local Ray cluster of two nodes on
# 127.0.0.1 (a head with 2 CPUs and a second node process with 1), from the venv VENV that
# scripts/ray-venv.sh made. ray_cluster_start VENV sets RAY_PORT and RAY_TMP and registers
# ray_cluster_stop on exit (`ray stop` ends every Ray process of this machine: run these where
# no other Ray cluster runs).
ray_cluster_start() {
  RAY_VENV=$1
  RAY_PORT=$("$RAY_VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  RAY_TMP=$(mktemp -d /tmp/odbray.XXXX)  # short: Ray's socket paths must fit 107 bytes
  "$RAY_VENV/bin/ray" start --head --node-ip-address 127.0.0.1 --port "$RAY_PORT" --num-cpus 2 \
    --include-dashboard false --temp-dir "$RAY_TMP" --disable-usage-stats >"$RAY_TMP/head.log" 2>&1
  "$RAY_VENV/bin/ray" start --address "127.0.0.1:$RAY_PORT" --node-ip-address 127.0.0.1 \
    --num-cpus 1 --disable-usage-stats >"$RAY_TMP/node.log" 2>&1
  trap ray_cluster_stop EXIT
}
ray_cluster_stop() {
  "$RAY_VENV/bin/ray" stop --force >/dev/null 2>&1 || true
  rm -rf "$RAY_TMP"
}
