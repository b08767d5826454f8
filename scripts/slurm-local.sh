#!/usr/bin/env bash
# A real single-node Slurm (Debian's slurmctld, slurmd, slurm-client and munge) on this machine, without systemd, for
# tests and benchmarks: everything it writes (slurm.conf, munge's key and socket, the daemons' state, logs and pid
# files) lives in one folder, and `stop` ends every daemon it started there.
#
# usage: bash scripts/slurm-local.sh start DIR   # idempotent; prints SLURM_CONF=DIR/slurm.conf once the node is idle
#        bash scripts/slurm-local.sh stop DIR    # cancels the folder's jobs, stops its daemons (DIR is kept)
#        bash scripts/slurm-local.sh status DIR  # exit 0 when its daemons run and the node answers
# Then run sbatch, squeue, scancel, sinfo with SLURM_CONF=DIR/slurm.conf in the environment.
#
# It needs root (slurmd starts jobs as their user; munged runs as the munge user) and the packages; without them it
# prints one line starting "skip:" saying why and exits 77 (ctest's SKIP_RETURN_CODE for the tests that use it).
# What works in a container: munged as the munge user with --force, its own key and socket in DIR (a munged of the
# system's is left alone); slurmctld -c (a cold start: no state from an earlier run); slurmd -N NODE; process tracking
# by /proc (proctrack/linuxproc, task/none: no cgroups), select/cons_tres with CR_Core, the node at 127.0.0.1, two
# free ports, SlurmUser=root. No accounting database: sacct is not available, time jobs inside the batch script.
set -euo pipefail

cmd=${1:-}
dir=${2:-}
if [[ -z $cmd || -z $dir ]]; then
  echo "usage: $0 start|stop|status DIR" >&2
  exit 2
fi
skip() {
  echo "skip: $*" >&2
  exit 77
}

node=rszlocal
conf=$dir/slurm.conf

# running PID: the process exists and is not a zombie (a daemon's parent is PID 1, which in a container may be a
# program that never reaps its children).
running() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [[ ${stat%% *} != Z ]]
}
# pid_alive FILE: the pid in FILE runs.
pid_alive() { [[ -s $1 ]] && running "$(cat "$1")"; }

# The node answers and is idle (or mixed/allocated, for status while jobs run).
node_state() { SLURM_CONF=$conf timeout 10 sinfo -h -N -n "$node" -o '%T' 2>/dev/null | head -n1; }

status() {
  [[ -f $conf ]] && pid_alive "$dir/munged.pid" && pid_alive "$dir/slurmctld.pid" && pid_alive "$dir/slurmd.pid" &&
    [[ $(node_state) =~ ^(idle|mixed|allocated|completing) ]]
}

# stop_pid FILE: TERM, up to 5 s, then KILL.
stop_pid() {
  local f=$1 pid
  pid_alive "$f" || { rm -f "$f"; return 0; }
  pid=$(cat "$f")
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 50); do
    running "$pid" || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$f"
}

stop() {
  [[ -d $dir ]] || return 0
  if [[ -f $conf ]] && pid_alive "$dir/slurmctld.pid"; then
    SLURM_CONF=$conf timeout 10 scancel --full -p debug 2>/dev/null || true
    # The jobs' steps end with the cancel; wait for them (slurmstepd of this node) a few seconds.
    for _ in $(seq 50); do
      [[ -z $(SLURM_CONF=$conf timeout 5 squeue -h -o %i 2>/dev/null) ]] && break
      sleep 0.1
    done
  fi
  stop_pid "$dir/slurmd.pid"
  stop_pid "$dir/slurmctld.pid"
  # Step daemons whose job outlived slurmd (they run from this folder's spool): by pid, never by name alone.
  local pid
  for pid in $(pgrep -x slurmstepd 2>/dev/null || true); do
    if { tr '\0' ' ' <"/proc/$pid/environ" | grep -q "SLURM_CONF=$conf"; } 2>/dev/null ||
       grep -qs "$dir/spool" "/proc/$pid/cmdline"; then
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  stop_pid "$dir/munged.pid"
}

free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' \
    2>/dev/null ||
    echo $((20000 + RANDOM % 20000))
}

start() {
  [[ $(id -u) -eq 0 ]] || skip "a local Slurm needs root (slurmd runs jobs as their user, munged as munge); run as root"
  local missing=()
  for exe in munged slurmctld slurmd sbatch squeue scancel sinfo; do
    command -v "$exe" >/dev/null || missing+=("$exe")
  done
  ((${#missing[@]} == 0)) ||
    skip "Slurm or munge is not installed (no ${missing[*]}): bash scripts/install-deps.sh installs" \
      "slurmctld slurmd slurm-client munge"
  id munge >/dev/null 2>&1 || skip "no munge user (the munge package creates it)"
  if status; then
    echo "SLURM_CONF=$conf"
    return 0
  fi
  stop  # a half-started folder: start again from nothing
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  conf=$dir/slurm.conf
  chmod 755 "$dir"
  mkdir -p "$dir/munge" "$dir/ctld" "$dir/spool" "$dir/tmp"
  chown munge: "$dir/munge"
  chmod 700 "$dir/munge"
  if [[ ! -s $dir/munge/munge.key ]]; then
    head -c 1024 /dev/urandom >"$dir/munge/munge.key"
    chown munge: "$dir/munge/munge.key"
    chmod 400 "$dir/munge/munge.key"
  fi
  runuser -u munge -- test -w "$dir/munge" ||
    { echo "rsz: the munge user cannot reach $dir/munge: every folder above it must be searchable (chmod o+x)" >&2
      return 1; }
  local socket=$dir/munge/munge.socket
  runuser -u munge -- munged --force --socket="$socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed" ||
    { echo "rsz: munged did not start; its log:" >&2; cat "$dir/munge/munged.log" >&2 || true; return 1; }
  for _ in $(seq 50); do [[ -s $dir/munge/munged.pid ]] && break; sleep 0.1; done
  cp "$dir/munge/munged.pid" "$dir/munged.pid"

  local host ctld_port slurmd_port real_memory
  host=$(hostname -s)
  # The node's memory as slurmd detects it (MB), so that jobs asking for --mem run as on a real cluster (without it
  # the node has 1 MB and any --mem is refused).
  real_memory=$(slurmd -C 2>/dev/null | sed -n 's/.*RealMemory=\([0-9][0-9]*\).*/\1/p' | head -n1)
  ctld_port=$(free_port)
  slurmd_port=$(free_port)
  while [[ $slurmd_port == "$ctld_port" ]]; do slurmd_port=$(free_port); done
  cat >"$conf" <<EOF
# Written by scripts/slurm-local.sh: a single node on 127.0.0.1, no systemd, no cgroups, no accounting database.
ClusterName=rszlocal
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/spool
TmpFS=$dir/tmp
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
# Start the next array elements as soon as others end (the defaults leave about 2.5 s between waves of short elements).
SchedulerParameters=sched_min_interval=0,batch_sched_delay=0
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
KillWait=2
MinJobAge=300
PlugStackConfig=$dir/plugstack.conf
NodeName=$node NodeAddr=127.0.0.1 NodeHostname=$host CPUs=$(nproc) ${real_memory:+RealMemory=$real_memory} State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
  : >"$dir/plugstack.conf"
  SLURM_CONF=$conf slurmctld -c -f "$conf" ||
    { echo "rsz: slurmctld did not start; its log:" >&2; tail -n 20 "$dir/slurmctld.log" >&2 || true; return 1; }
  SLURM_CONF=$conf slurmd -N "$node" -f "$conf" ||
    { echo "rsz: slurmd did not start; its log:" >&2; tail -n 20 "$dir/slurmd.log" >&2 || true; return 1; }
  local state=
  for _ in $(seq 300); do
    state=$(node_state)
    [[ $state == idle ]] && break
    sleep 0.1
  done
  if [[ $state != idle ]]; then
    echo "rsz: the Slurm node is not idle after 30 s (state: ${state:-no answer}); the logs' ends:" >&2
    tail -n 10 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
    return 1
  fi
  echo "SLURM_CONF=$conf"
}

case $cmd in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status DIR" >&2; exit 2 ;;
esac
