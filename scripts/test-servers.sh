#!/usr/bin/env bash
# Starts the servers the integration tests need on free loopback ports, or stops them.
#   scripts/test-servers.sh start DIR   → starts what is installed, writes DIR/env (source it)
#   scripts/test-servers.sh stop DIR    → stops every server started into DIR, by PID
# Used by .ci/run and by developers: `scripts/test-servers.sh start .tmp/servers && . .tmp/servers/env && npm test`.
set -euo pipefail

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# A port for a cluster node: its bus port (port + 10000) must be free too, and both below 65536.
free_cluster_port() {
  python3 -c '
import random, socket
for _ in range(200):
    p = random.randint(20000, 45000)
    try:
        socks = [socket.socket(), socket.socket()]
        socks[0].bind(("127.0.0.1", p)); socks[1].bind(("127.0.0.1", p + 10000))
        for s in socks: s.close()
        print(p); break
    except OSError:
        pass
'
}

wait_for() { # wait_for SECONDS command...
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then echo "timed out waiting for: $*" >&2; return 1; fi
    sleep 0.2
  done
}

start_redis() { # start_redis DIR NAME PORT [extra args...]
  local dir=$1 name=$2 port=$3; shift 3
  mkdir -p "$dir/$name"
  redis-server --bind 127.0.0.1 --port "$port" --dir "$dir/$name" --save '' --appendonly no \
    --daemonize yes --pidfile "$dir/$name.pid" --logfile "$dir/$name.log" "$@"
  wait_for 10 redis-cli -p "$port" ping
}

start() {
  local dir; dir=$(realpath -m "$1"); mkdir -p "$dir"
  local env="$dir/env"; : > "$env"

  if command -v redis-server >/dev/null; then
    local port; port=$(free_port)
    start_redis "$dir" redis "$port"
    echo "export SLUICE_TEST_REDIS_URL=redis://127.0.0.1:$port" >> "$env"
    echo "export SLUICE_TEST_REDIS_BIN=$(command -v redis-server)" >> "$env"

    local nodes=()
    for i in 1 2 3; do
      port=$(free_cluster_port)
      start_redis "$dir" "cluster-$i" "$port" --cluster-enabled yes --cluster-config-file "$dir/cluster-$i/nodes.conf" --cluster-node-timeout 5000
      nodes+=("127.0.0.1:$port")
    done
    redis-cli --cluster create "${nodes[@]}" --cluster-yes >"$dir/cluster-create.log" 2>&1
    wait_for 20 bash -c "redis-cli -p ${nodes[0]##*:} cluster info | grep -q cluster_state:ok"
    echo "export SLUICE_TEST_REDIS_CLUSTER=$(IFS=,; echo "${nodes[*]}")" >> "$env"
  fi

  local pg_bin=/usr/lib/postgresql/15/bin
  if [ -x "$pg_bin/initdb" ]; then
    local port; port=$(free_port)
    local data="$dir/pg" runas=()
    [ "$(id -u)" = 0 ] && runas=(runuser -u nobody --)
    mkdir -p "$data" && chmod 777 "$dir" && [ "$(id -u)" = 0 ] && chown nobody "$data"
    "${runas[@]}" "$pg_bin/initdb" -D "$data" -U sluice --auth=trust -E UTF8 >"$dir/pg-init.log" 2>&1
    "${runas[@]}" "$pg_bin/pg_ctl" -D "$data" -l "$dir/pg.log" -w -o "-k $data -h 127.0.0.1 -p $port -c fsync=off" start >/dev/null
    "${runas[@]}" "$pg_bin/createdb" -h 127.0.0.1 -p "$port" -U sluice sluice_test
    echo "export SLUICE_TEST_PG_URL=postgres://sluice@127.0.0.1:$port/sluice_test" >> "$env"
    echo "export SLUICE_TEST_PG_DATA=$data" >> "$env"
  fi

  local nats; nats=$(command -v nats-server || true)
  [ -z "$nats" ] && [ -x /usr/sbin/nats-server ] && nats=/usr/sbin/nats-server
  if [ -n "$nats" ]; then
    local port; port=$(free_port)
    mkdir -p "$dir/nats"
    # JetStream with its store under DIR; -P writes the pid file `stop` reads.
    "$nats" -js -a 127.0.0.1 -p "$port" -sd "$dir/nats" -P "$dir/nats.pid" -l "$dir/nats.log" >/dev/null 2>&1 &
    wait_for 10 grep -q 'Server is ready' "$dir/nats.log"
    echo "export SLUICE_TEST_NATS_URL=nats://127.0.0.1:$port" >> "$env"
    # For tests that start (and kill, and wipe) nats-servers of their own.
    echo "export SLUICE_TEST_NATS_BIN=$nats" >> "$env"
  fi

  local mysqld; mysqld=$(command -v mariadbd || command -v mysqld || true)
  [ -z "$mysqld" ] && [ -x /usr/sbin/mariadbd ] && mysqld=/usr/sbin/mariadbd
  if [ -n "$mysqld" ]; then
    local port; port=$(free_port)
    local data="$dir/mysql"
    mkdir -p "$data"
    local user_args=(); [ "$(id -u)" = 0 ] && user_args=(--user=root)
    mariadb-install-db --datadir="$data" "${user_args[@]}" --auth-root-authentication-method=normal \
      --skip-test-db >"$dir/mysql-init.log" 2>&1
    "$mysqld" --no-defaults --datadir="$data" --socket="$data/mysql.sock" --pid-file="$dir/mysql.pid" \
      --bind-address=127.0.0.1 --port="$port" "${user_args[@]}" --skip-log-bin \
      --innodb-flush-log-at-trx-commit=2 >"$dir/mysql.log" 2>&1 &
    wait_for 30 mariadb-admin --socket="$data/mysql.sock" -uroot ping
    mariadb --socket="$data/mysql.sock" -uroot -e "CREATE DATABASE sluice_test; CREATE USER 'sluice'@'127.0.0.1' IDENTIFIED BY 'sluice'; GRANT ALL ON *.* TO 'sluice'@'127.0.0.1'; FLUSH PRIVILEGES;"
    echo "export SLUICE_TEST_MYSQL_URL=mysql://sluice:sluice@127.0.0.1:$port/sluice_test" >> "$env"
  fi
  cat "$env"
}

stop() {
  local dir; dir=$(realpath -m "$1")
  [ -d "$dir" ] || return 0
  if [ -f "$dir/pg/postmaster.pid" ]; then
    local runas=(); [ "$(id -u)" = 0 ] && runas=(runuser -u nobody --)
    "${runas[@]}" /usr/lib/postgresql/15/bin/pg_ctl -D "$dir/pg" -m immediate stop >/dev/null 2>&1 || true
  fi
  local pids=()
  for pidfile in "$dir"/*.pid; do
    [ -f "$pidfile" ] || continue
    pids+=("$(cat "$pidfile")")
    kill "${pids[-1]}" 2>/dev/null || true
  done
  # Until they have exited (at most 15 s), so the caller may remove DIR.
  local deadline=$((SECONDS + 15))
  for pid in "${pids[@]}"; do
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
  done
}

case "${1:-}" in
  start) start "${2:?directory}" ;;
  stop) stop "${2:?directory}" ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
