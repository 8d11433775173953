#!/usr/bin/env bash
# A test cluster on one machine: N hosts as Linux network namespaces joined by
# a bridge, with optionally shaped links, and Open MPI launching across them.
#
#   scripts/cluster.sh up [-n 3] [--delay 5ms] [--rate 100mbit] [--host I:DELAY:RATE]...
#   scripts/cluster.sh mpirun -np 3 target/release/examples/net_probe   # mpirun inside host 1
#   scripts/cluster.sh exec 2 ip addr                                   # a command on host 2
#   scripts/cluster.sh caps                                             # netem / tbf available?
#   scripts/cluster.sh status | down
#
# Layout (prefix P = $NUCE_CLUSTER, default "nuce"):
#   namespace P-br  holds bridge br0 and one veth end vI per host;
#   namespace P-hI  (I = 1..N) holds the other end, eth0 = 10.77.0.I/24, and lo.
# The root namespace gets no interface, route or address: every link lives in
# a namespace this script made, and only 10.77.0.0/24 is used, inside them.
# /etc/netns/P-hI/{hosts,resolv.conf} (bind-mounted by `ip netns exec`) make the
# host names resolve without DNS; commands run with UTS hostname P-hI.
#
# Shaping (each host's link, both directions, so one-way latency between hosts
# A and B is delay_A + delay_B): `--delay` needs the kernel's sch_netem,
# `--rate` uses netem's rate when netem is there, else tbf. `up` fails (exit 3)
# when a delay is asked for and netem is missing (see `caps`).
#
# Open MPI (4.1) starts its daemons through `cluster.sh agent HOST CMD`
# (--mca plm_rsh_agent) instead of ssh; OOB and the TCP BTL are restricted to
# 10.77.0.0/24. `down` kills what runs in the namespaces, deletes them and the
# files `up` wrote; `up` first tears down a leftover cluster of the same prefix
# and tears down on any failure.
set -Eeuo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SELF="$ROOT/scripts/cluster.sh"
P="${NUCE_CLUSTER:-nuce}"
SUBNET="10.77.0"
STATE_DIR="/run/nuce-cluster"
STATE="$STATE_DIR/$P.hosts"
HOSTFILE="$ROOT/hostfiles/cluster-$P"
[[ "$P" =~ ^[a-z][a-z0-9]{0,7}$ ]] || { echo "cluster.sh: NUCE_CLUSTER must be 1-8 lower-case letters/digits" >&2; exit 2; }

die() { echo "cluster.sh: $*" >&2; exit 2; }
# Not root: namespaces through sudo, keeping the environment (Open MPI's
# OMPI_* settings) and PATH (mpirun, cargo-built programs).
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo -E env PATH=$PATH"

# Namespaces of this prefix that exist now (only names this script makes).
our_namespaces() {
  ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$P-(br|h[0-9]+|probe)$" || true
}

host_ns() { # host index or name -> namespace
  local h="$1"
  [[ "$h" =~ ^[0-9]+$ ]] && h="$P-h$h"
  [[ "$h" =~ ^$P-h[0-9]+$ ]] || die "unknown host '$1' (want an index or $P-hI)"
  ip netns list | awk '{print $1}' | grep -qx "$h" || die "host $h is not up"
  echo "$h"
}

# Runs "$@" in namespace $1 with UTS hostname $1.
in_host() {
  local ns="$1"; shift
  $SUDO ip netns exec "$ns" unshare --uts /bin/sh -c 'hostname "$0" && exec "$@"' "$ns" "$@"
}

cmd_down() {
  local ns pids
  for ns in $(our_namespaces); do
    pids="$($SUDO ip netns pids "$ns" 2>/dev/null || true)"
    # shellcheck disable=SC2086
    [ -n "$pids" ] && $SUDO kill -TERM $pids 2>/dev/null || true
  done
  sleep 0.2
  for ns in $(our_namespaces); do
    pids="$($SUDO ip netns pids "$ns" 2>/dev/null || true)"
    # shellcheck disable=SC2086
    [ -n "$pids" ] && $SUDO kill -KILL $pids 2>/dev/null || true
    $SUDO ip netns del "$ns" 2>/dev/null || true
    $SUDO rm -rf "/etc/netns/$ns"
  done
  $SUDO rmdir /etc/netns 2>/dev/null || true
  $SUDO rm -f "$STATE"
  $SUDO rmdir "$STATE_DIR" 2>/dev/null || true
  rm -f "$HOSTFILE"
}

# Probes which shaping qdiscs the kernel has, on the loopback of a scratch namespace.
cmd_caps() {
  local ns="$P-probe" q
  $SUDO ip netns add "$ns"
  for q in "netem delay 1ms" "tbf rate 100mbit burst 64kb latency 100ms"; do
    if $SUDO ip netns exec "$ns" tc qdisc replace dev lo root $q 2>/dev/null; then
      echo "${q%% *} yes"
    else
      echo "${q%% *} no"
    fi
  done
  $SUDO ip netns del "$ns"
}

has_netem() { cmd_caps | grep -qx "netem yes"; }

# qdisc arguments for a delay and a rate (either may be empty).
qdisc_for() {
  local delay="$1" rate="$2" netem="$3"
  if [ "$netem" = yes ] && [ -n "$delay$rate" ]; then
    echo "netem ${delay:+delay $delay} ${rate:+rate $rate} limit 10000"
  elif [ -n "$rate" ]; then
    echo "tbf rate $rate burst $(tbf_burst "$rate") latency 200ms"
  fi
}

# tbf bucket: 4 ms worth of the rate, at least 64 KiB (a smaller bucket caps
# fast links below their rate: the qdisc's timer cannot refill it in time).
tbf_burst() {
  local r="$1" num unit bits
  num="${r%%[a-z]*}"; unit="${r#"$num"}"; num="${num%%.*}"
  case "$unit" in
    bit) bits=$num ;; kbit) bits=$((num * 1000)) ;; mbit) bits=$((num * 1000000)) ;;
    gbit) bits=$((num * 1000000000)) ;; bps) bits=$((num * 8)) ;; kbps) bits=$((num * 8000)) ;;
    mbps) bits=$((num * 8000000)) ;; gbps) bits=$((num * 8000000000)) ;; *) bits=0 ;;
  esac
  local bytes=$((bits / 8 / 250))
  [ "$bytes" -lt 65536 ] && bytes=65536
  echo "${bytes}b"
}

cmd_up() {
  local n=3 delay="" rate="" specs=()
  while [ $# -gt 0 ]; do
    case "$1" in
      -n) n="${2:?}"; shift 2 ;;
      --delay) delay="${2:?}"; shift 2 ;;
      --rate) rate="${2:?}"; shift 2 ;;
      --host) specs+=("${2:?}"); shift 2 ;;
      *) die "up: unknown argument '$1'" ;;
    esac
  done
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 200 ] || die "-n must be 1..200"
  local tc_re='^([0-9]+(\.[0-9]+)?(us|ms|s|bit|kbit|mbit|gbit|bps|kbps|mbps|gbps))?$'
  [[ "$delay" =~ $tc_re ]] && [[ "$rate" =~ $tc_re ]] || die "bad --delay/--rate"
  declare -A hdelay hrate
  local i s
  for ((i = 1; i <= n; i++)); do hdelay[$i]="$delay"; hrate[$i]="$rate"; done
  for s in "${specs[@]}"; do
    [[ "$s" =~ ^([0-9]+):([^:]*):([^:]*)$ ]] || die "bad --host '$s' (want I:DELAY:RATE)"
    local hi="${BASH_REMATCH[1]}" hd="${BASH_REMATCH[2]}" hr="${BASH_REMATCH[3]}"
    [ "$hi" -ge 1 ] && [ "$hi" -le "$n" ] || die "--host index $hi out of 1..$n"
    [[ "$hd" =~ $tc_re ]] && [[ "$hr" =~ $tc_re ]] || die "bad --host '$s'"
    hdelay[$hi]="$hd"; hrate[$hi]="$hr"
  done
  command -v ip >/dev/null && command -v tc >/dev/null || die "needs iproute2: scripts/setup.sh iproute2"

  cmd_down
  trap 'echo "cluster.sh: up failed, cleaning up" >&2; cmd_down' ERR
  local netem=no any_delay=""
  for ((i = 1; i <= n; i++)); do any_delay+="${hdelay[$i]}"; done
  if has_netem; then netem=yes; fi
  if [ -n "$any_delay" ] && [ "$netem" = no ]; then
    trap - ERR
    echo "cluster.sh: this kernel has no sch_netem: cannot emulate latency (bandwidth via tbf works)" >&2
    exit 3
  fi

  $SUDO mkdir -p "$STATE_DIR"
  local br="$P-br" ns hosts_file q
  $SUDO ip netns add "$br"
  echo "$br" | $SUDO tee "$STATE" >/dev/null
  $SUDO ip netns exec "$br" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 || true
  $SUDO ip -n "$br" link add br0 type bridge
  $SUDO ip -n "$br" link set br0 up
  hosts_file="127.0.0.1 localhost"$'\n'
  for ((i = 1; i <= n; i++)); do hosts_file+="$SUBNET.$i $P-h$i"$'\n'; done
  : >"$HOSTFILE"
  for ((i = 1; i <= n; i++)); do
    ns="$P-h$i"
    $SUDO ip netns add "$ns"
    echo "$ns" | $SUDO tee -a "$STATE" >/dev/null
    # Created inside the bridge namespace, peer moved straight into the host.
    $SUDO ip -n "$br" link add "v$i" type veth peer name eth0 netns "$ns"
    $SUDO ip -n "$br" link set "v$i" master br0
    $SUDO ip -n "$br" link set "v$i" up
    $SUDO ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 || true
    # Keep TCP's congestion window across the idle gaps of a ping-pong, so a
    # delayed link's bandwidth is not measured in slow start.
    $SUDO ip netns exec "$ns" sysctl -qw net.ipv4.tcp_slow_start_after_idle=0 || true
    $SUDO ip -n "$ns" link set lo up
    $SUDO ip -n "$ns" addr add "$SUBNET.$i/24" dev eth0
    $SUDO ip -n "$ns" link set eth0 up
    q="$(qdisc_for "${hdelay[$i]}" "${hrate[$i]}" "$netem")"
    if [ -n "$q" ]; then
      # shellcheck disable=SC2086
      $SUDO ip netns exec "$ns" tc qdisc add dev eth0 root $q
      # shellcheck disable=SC2086
      $SUDO ip netns exec "$br" tc qdisc add dev "v$i" root $q
    fi
    $SUDO mkdir -p "/etc/netns/$ns"
    printf '%s' "$hosts_file" | $SUDO tee "/etc/netns/$ns/hosts" >/dev/null
    echo "# nuce test cluster: no DNS" | $SUDO tee "/etc/netns/$ns/resolv.conf" >/dev/null
    echo "$P-h$i slots=${NUCE_CLUSTER_SLOTS:-2}" >>"$HOSTFILE"
  done
  trap - ERR
  echo "cluster.sh: $n hosts $P-h1..$P-h$n on $SUBNET.0/24 (netem: $netem), hostfile $HOSTFILE" >&2
}

cmd_status() {
  local ns
  for ns in $(our_namespaces); do
    echo "== $ns"
    $SUDO ip -n "$ns" -brief addr
    $SUDO ip netns exec "$ns" tc qdisc show | grep -vE "noqueue|pfifo_fast" || true
  done
}

# Open MPI's launcher agent: `agent HOST CMD...` runs CMD (a shell command
# line, as ssh would) in HOST's namespace.
cmd_agent() {
  local h="${1:?agent: no host}"; shift
  # Open MPI may pass options before the host name, as to ssh; skip them.
  while [[ "$h" == -* ]]; do h="${1:?agent: no host}"; shift; done
  local ns
  ns="$(host_ns "$h")"
  in_host "$ns" /bin/sh -c "$*"
}

# mpirun inside host 1, daemons started through the agent, TCP on the subnet only.
cmd_mpirun() {
  [ -f "$HOSTFILE" ] || die "no cluster up (hostfile $HOSTFILE missing)"
  local ns
  ns="$(host_ns 1)"
  # shellcheck source=scripts/env.sh
  . "$ROOT/scripts/env.sh"
  in_host "$ns" env \
    OMPI_MCA_plm_rsh_agent="$SELF agent" \
    OMPI_MCA_plm_rsh_no_tree_spawn=1 \
    OMPI_MCA_btl=self,tcp \
    OMPI_MCA_btl_tcp_if_include="$SUBNET.0/24" \
    OMPI_MCA_oob_tcp_if_include="$SUBNET.0/24" \
    OMPI_MCA_hwloc_base_binding_policy=none \
    mpirun --hostfile "$HOSTFILE" "$@"
}

case "${1:-}" in
  up) shift; cmd_up "$@" ;;
  down) cmd_down ;;
  status) cmd_status ;;
  caps) cmd_caps ;;
  exec) shift; ns="$(host_ns "${1:?exec: no host}")"; shift; in_host "$ns" "$@" ;;
  agent) shift; cmd_agent "$@" ;;
  mpirun) shift; cmd_mpirun "$@" ;;
  *) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
