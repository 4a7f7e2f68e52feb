#!/usr/bin/env bash
# Real work on etcfs (issue #13, item 6), in one run, on
#   local   a directory on the file system that holds the device image,
#   bindfs  a FUSE passthrough of such a directory (what FUSE alone costs),
#   etcfs   2-node etcfs clusters whose devices are images on that same file system, one per
#           FUSE front end: "high" (libfuse 2, --frontend highlevel) and "low" (libfuse 3's
#           low-level API with kernel caches, --frontend lowlevel, the default),
# and one table with each figure and its ratios (to local, and each etcfs to bindfs):
#   - the metadata loop (bench/MetaLoop.java): create+write 100 B+close, stat, open+read+close,
#     unlink over ETCFS_BENCH_META_FILES files, by 1 process and by 8 processes (the same number of
#     files split among them, each in its own directory); ops/s over the common wall time;
#   - a source tree of 10,000+ files built from this machine's /usr (WORKDIR/src.tar): tar x, then
#     git init+add+commit on it, then git status --porcelain (twice, the kernel's caches dropped
#     before each) and a sha256 sweep of every file, the last two on node2 for etcfs (the tree
#     was written on node1), on the same directory otherwise.
#     The sweeps of the three targets must be identical, or the run fails.
# Usage: realwork.sh ETCFS_HOME WORKDIR
set -euo pipefail
home=$1
work=$2
meta_files=${ETCFS_BENCH_META_FILES:-2000}
meta_procs=${ETCFS_BENCH_META_PROCS:-8}
tree_dirs=${ETCFS_BENCH_TREE_DIRS:-usr/include usr/share/perl usr/lib/python3}
tree_min=${ETCFS_BENCH_TREE_MIN:-10000}   # regular files the tree must have at least
step_timeout=${ETCFS_BENCH_STEP_TIMEOUT:-600}  # seconds, each timed step
etcfs="$home/bin/etcfs"
here=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
export ETCFS_RUNTIME_DIR="$work/rt"
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
# No automatic gc: past 6,700 loose objects git commit starts `git gc --auto` in the background,
# which on etcfs was still packing the tree's 12,000 objects on node1 while node2 ran the status
# and the sweep (a load of its own in those figures), and then rewrote .git under the cleanup's
# rm -rf ("Directory not empty"). The same for every target.
export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=gc.auto GIT_CONFIG_VALUE_0=0

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'realwork: %s\n' "$*" >&2; exit 1; }

cleanup() {
  set +e
  mountpoint -q "$work/bindfs" && fusermount -u "$work/bindfs"
  for c in "$work"/cluster-*; do
    [[ -f $c/cluster.env ]] || continue
    timeout 120 "$etcfs" down --dir "$c" >/dev/null 2>&1
    for mp in "$c"/mnt/*; do
      grep -q " $mp " /proc/self/mountinfo && fusermount -uz "$mp"
    done
  done
}
trap cleanup EXIT

command -v git >/dev/null || die "git is missing"
command -v bindfs >/dev/null || die "bindfs is missing"
rm -rf "$work" && mkdir -p "$work/local" "$work/bindfs-src" "$work/bindfs" "$work/out"

say "building the source tree ($tree_dirs) into $work/src.tar"
# shellcheck disable=SC2086
tar cf "$work/src.tar" --hard-dereference -C / $tree_dirs
nfiles=$(tar tvf "$work/src.tar" | grep -c '^-')
((nfiles >= tree_min)) || die "the tree has $nfiles regular files, fewer than $tree_min"
say "the tree: $nfiles regular files, $(du -h "$work/src.tar" | cut -f1)"

for fe in high low; do
  say "starting a 2-node etcfs on the ${fe}level front end ($work/cluster-$fe)"
  timeout 300 "$etcfs" up --nodes 2 --dir "$work/cluster-$fe" --size 4G --frontend "${fe}level" \
    >/dev/null
  for i in 1 2; do # never measure the empty mountpoint directory in place of the filesystem
    grep -q " $work/cluster-$fe/mnt/node$i .* - fuse.etcfs " /proc/self/mountinfo \
      || die "$work/cluster-$fe/mnt/node$i is not an etcfs mount"
  done
done
bindfs --no-allow-other "$work/bindfs-src" "$work/bindfs"
grep -q " $work/bindfs .* - fuse" /proc/self/mountinfo || die "$work/bindfs is not a FUSE mount"

drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true; }

# timed STEP CMD... -> runs CMD under the step bound, prints its wall seconds
timed() {
  local step=$1; shift
  local t0 t1
  t0=$(date +%s.%N)
  timeout "$step_timeout" "$@" || die "$step failed or took over ${step_timeout}s: $*"
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}

# metaloop TARGET DIR PROCS -> lines "test value unit"
metaloop() {
  local target=$1 d=$2 procs=$3 i pids=() per=$((meta_files / $3))
  local out="$work/out/meta.$target.$procs" bar="$work/out/barrier.$target.$procs"
  rm -rf "$bar" && mkdir -p "$bar"
  for ((i = 0; i < procs; i++)); do
    timeout "$step_timeout" java -Xshare:auto -XX:TieredStopAtLevel=1 "$here/MetaLoop.java" \
      "$d/meta$procs/p$i" "$per" "$bar" "$procs" "$i" > "$out.$i" 2> "$out.$i.err" &
    pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i" || die "metaloop on $target ($procs processes) failed: $(cat "$out".*.err)"; done
  cat "$out".[0-9]* | awk -v procs="$procs" '
    { for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
      op = f["op"]; n[op] += f["n"]
      if (!(op in s) || f["start_ns"] < s[op]) s[op] = f["start_ns"]
      if (!(op in e) || f["end_ns"] > e[op]) e[op] = f["end_ns"] }
    END { for (op in n) printf "%s-%dp %.0f ops/s\n", op, procs, n[op] * 1e9 / (e[op] - s[op]) }'
  rm -rf "${d:?}/meta$procs"
}

# git_status TARGET READ_DIR TEST -> the line "TEST seconds s" of a git status --porcelain in
# READ_DIR/tree, the kernel's caches dropped first; fails unless the tree is clean
git_status() {
  local target=$1 r=$2 test=$3 s
  drop_caches
  s=$(timed "$test" sh -c "cd '$r/tree' && git -c safe.directory='*' status --porcelain > '$work/out/status.$target'")
  [[ ! -s $work/out/status.$target ]] \
    || die "$test on $target is not clean: $(head -5 "$work/out/status.$target")"
  echo "$test $s s"
}

# measure TARGET WRITE_DIR READ_DIR -> lines "test value unit"
measure() {
  local target=$1 w=$2 r=$3 s
  say "$target: metadata loop, 1 process, $meta_files files"
  metaloop "$target" "$w" 1
  say "$target: metadata loop, $meta_procs processes, $((meta_files / meta_procs)) files each"
  metaloop "$target" "$w" "$meta_procs"
  mkdir -p "$w/tree"
  say "$target: tar x ($nfiles files)"
  s=$(timed "tar x" tar xf "$work/src.tar" -C "$w/tree")
  echo "tar-x $s s"
  awk -v n="$nfiles" -v s="$s" 'BEGIN { printf "tar-x-rate %.0f files/s\n", n / s }'
  say "$target: git init, add -A, commit"
  s=$(timed "git add+commit" sh -c "cd '$w/tree' && git init -q && git add -A && git commit -q -m x")
  echo "git-add+commit $s s"
  say "$target: git status --porcelain in $r/tree"
  git_status "$target" "$r" git-status
  # Again, kernel caches dropped once more: on etcfs node2's JVM has now compiled its look-up
  # path, as on any node that has been up a while; the first run above also pays that JIT.
  git_status "$target" "$r" git-status-again
  drop_caches
  say "$target: sha256 sweep of $r/tree"
  s=$(timed "sweep" sh -c "cd '$r/tree' && find . -path ./.git -prune -o -type f -print0 | sort -z \
    | xargs -0 sha256sum > '$work/out/sweep.$target'")
  echo "sweep $s s"
  local swept
  swept=$(wc -l < "$work/out/sweep.$target")
  ((swept == nfiles)) || die "the sweep on $target saw $swept files, the tree has $nfiles"
  # Not a measurement: a tree that cannot be removed is reported after the table, which the
  # figures above must not be lost for (seen: rm -rf of .git answered "Directory not empty"
  # while git's background auto gc, off now, still wrote there).
  rm -rf "${w:?}/tree" 2> "$work/out/rm.$target" || echo "cleanup-failed 1 -"
}

declare -A result unit
for target in local bindfs high low; do
  case $target in
    local) w="$work/local" r=$w ;;
    bindfs) w="$work/bindfs" r=$w ;;
    high | low) w="$work/cluster-$target/mnt/node1" r="$work/cluster-$target/mnt/node2" ;;
  esac
  say "measuring $target ($w, read side $r)"
  while read -r test value u; do
    result[$target.$test]=$value
    unit[$test]=$u
  done < <(measure "$target" "$w" "$r"; echo "done 1 -")
  [[ -n ${result[$target.done]:-} ]] || die "measuring $target failed"
done

for target in bindfs high low; do
  cmp -s "$work/out/sweep.local" "$work/out/sweep.$target" \
    || die "the sweep on $target differs from local's: diff $work/out/sweep.local $work/out/sweep.$target"
done
say "the four sweeps are identical ($nfiles files)"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "-" }'; }
printf '\netcfs real-work benchmark, %s, %s, %s cores, %s; tree: %s files; meta loop: %s files\n' \
  "$(date -u +%Y-%m-%d)" "$(uname -r)" "$(nproc)" "$(free -g | awk '/Mem:/{print $2 " GiB"}')" \
  "$nfiles" "$meta_files"
printf '%-16s %-7s %9s %9s %9s %9s %8s %8s %8s %8s\n' test unit local bindfs high low \
  bindfs/l high/b low/l low/b
for test in create-1p stat-1p read-1p unlink-1p "create-${meta_procs}p" "stat-${meta_procs}p" \
    "read-${meta_procs}p" "unlink-${meta_procs}p" tar-x tar-x-rate git-add+commit git-status \
    git-status-again sweep; do
  l=${result[local.$test]:-0} b=${result[bindfs.$test]:-0}
  h=${result[high.$test]:-0} e=${result[low.$test]:-0}
  printf '%-16s %-7s %9s %9s %9s %9s %8s %8s %8s %8s\n' "$test" "${unit[$test]}" "$l" "$b" \
    "$h" "$e" "$(ratio "$b" "$l")" "$(ratio "$h" "$b")" "$(ratio "$e" "$l")" "$(ratio "$e" "$b")"
done
echo "(high: etcfs on libfuse 2; low: etcfs on libfuse 3's low-level API, the default)"
failed=0
for target in local bindfs high low; do
  if [[ -n ${result[$target.cleanup-failed]:-} ]]; then
    printf 'realwork: removing the tree on %s failed: %s\n' "$target" \
      "$(head -3 "$work/out/rm.$target")" >&2
    failed=1
  fi
done
echo "(ops/s and files/s: higher is better; s: lower is better; etcfs git-status and sweep ran on node2)"
exit "$failed"
