#!/usr/bin/env bash
# Lock backends and allocators side by side (issue #14): the handoff and node-scaling runs of
# cluster.sh and the node-kill run of faults.sh, once per strategy, each on fresh local clusters
# from the tarball (real node processes, FUSE mounts, etcd). Printed as one table: every figure
# of every strategy beside the first strategy's, with their ratio.
# Usage: strategies.sh ETCFS_HOME WORKDIR
#   ETCFS_BENCH_STRATEGIES  lock/allocator pairs (default "etcd/arena hazelcast/arena")
#   and cluster.sh's and faults.sh's own settings (sizes, node counts, runs).
set -euo pipefail
home=$1
work=$2
strategies=${ETCFS_BENCH_STRATEGIES:-"etcd/arena hazelcast/arena"}
here=$(cd "$(dirname "$0")" && pwd)
etcfs="$home/bin/etcfs"

say() { printf '==> %s\n' "$*" >&2; }

# Refused before anything starts: every strategy must be LOCK/ALLOCATOR with names this
# etcfs knows (etcfs up refuses an unknown or uninstalled one itself, but only when its turn
# comes).
# (etcfs up exits 2 there, on purpose: || true keeps pipefail from ending the script)
locks=$({ "$etcfs" up --lock '?' --dir "$work.check" 2>&1 || true; } \
  | sed -n "s/.*unknown lock backend '?' (\(.*\))/\1/p")
allocs=$({ "$etcfs" up --alloc '?' --dir "$work.check" 2>&1 || true; } \
  | sed -n "s/.*unknown allocator '?' (\(.*\))/\1/p")
for s in $strategies; do
  lock=${s%/*} alloc=${s#*/}
  [[ $s == */* && -n $lock && -n $alloc ]] \
    || { echo "strategies.sh: '$s' is not LOCK/ALLOCATOR (for example etcd/arena)" >&2; exit 2; }
  if ! grep -qw -- "$lock" <<< "${locks// or / }"; then
    echo "strategies.sh: $s: unknown lock backend '$lock' (this etcfs has: $locks)" >&2
    exit 2
  fi
  if ! grep -qw -- "$alloc" <<< "${allocs// or / }"; then
    echo "strategies.sh: $s: unknown allocator '$alloc' (this etcfs has: $allocs)" >&2
    exit 2
  fi
done

rm -rf "$work" && mkdir -p "$work"
for s in $strategies; do
  lock=${s%/*} alloc=${s#*/}
  name="$lock-$alloc"
  args=""
  [[ $lock != etcd ]] && args+=" --lock $lock"
  [[ $alloc != arena ]] && args+=" --alloc $alloc"
  : > "$work/$name.tsv"
  say "$s: handoff and node scaling"
  ETCFS_BENCH_PARTS="handoff scaling" ETCFS_BENCH_UP_ARGS="$args" ETCFS_BENCH_TSV="$work/$name.tsv" \
    "$here/cluster.sh" "$home" "$work/$name/cluster" > "$work/$name.cluster.txt"
  say "$s: node kill"
  ETCFS_BENCH_FAULT_PARTS="node-kill" ETCFS_BENCH_UP_ARGS="$args" \
    ETCFS_BENCH_TSV="$work/$name.tsv" "$here/faults.sh" "$home" "$work/$name/faults" \
    > "$work/$name.faults.txt"
done

printf '\netcfs strategies, %s, %s, %s cores, %s\n\n' "$(date -u +%Y-%m-%d)" "$(uname -r)" \
  "$(nproc)" "$(free -g | awk '/Mem:/{print $2 " GiB"}')"
first=""
header="| figure |"
rule="|---|"
for s in $strategies; do
  header+=" $s |"
  rule+="---:|"
  if [[ -n $first ]]; then
    header+=" ÷ $first |"
    rule+="---:|"
  fi
  first=${first:-$s}
done
echo "$header"
echo "$rule"
base="$work/${first%/*}-${first#*/}.tsv"
while IFS=$'\t' read -r figure value; do
  row="| $figure | $value |"
  for s in $strategies; do
    [[ $s == "$first" ]] && continue
    other=$(awk -F'\t' -v f="$figure" '$1 == f { print $2 }' "$work/${s%/*}-${s#*/}.tsv")
    ratio=$(awk -v a="$other" -v b="$value" 'BEGIN { if (a ~ /^[0-9.]+$/ && b + 0 > 0) printf "%.2f", a / b; else print "-" }')
    row+=" ${other:--} | $ratio |"
  done
  echo "$row"
done < "$base"
echo
echo "Each strategy's own tables: $work/<lock>-<allocator>.cluster.txt and .faults.txt"
