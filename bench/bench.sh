#!/usr/bin/env bash
# The etcfs benchmark: the same fio workloads, in one run, on
#   direct  a directory on the file system that holds the device image (the physical limit),
#   bindfs  a FUSE passthrough of such a directory (what FUSE alone costs),
#   etcfs   a one-node etcfs mount whose device is an image on that same file system,
# and a table with each figure and its ratio to direct. Usage: bench.sh ETCFS_HOME WORKDIR
set -euo pipefail
home=$1
work=$2
size=${ETCFS_BENCH_SIZE:-1G}        # sequential file
rsize=${ETCFS_BENCH_RSIZE:-256M}    # random-I/O file
rtime=${ETCFS_BENCH_RUNTIME:-20}    # seconds per random-I/O run
files=${ETCFS_BENCH_FILES:-10000}   # create/stat/unlink
etcfs="$home/bin/etcfs"
export ETCFS_RUNTIME_DIR="$work/rt"

say() { printf '==> %s\n' "$*" >&2; }

cleanup() {
  set +e
  mountpoint -q "$work/bindfs" && fusermount -u "$work/bindfs"
  [[ -f $work/cluster/cluster.env ]] && "$etcfs" down --dir "$work/cluster" >/dev/null 2>&1
}
trap cleanup EXIT

rm -rf "$work" && mkdir -p "$work/direct" "$work/bindfs-src" "$work/bindfs"
say "starting a one-node etcfs (device image in $work/cluster)"
"$etcfs" up --nodes 1 --dir "$work/cluster" --size 8G >/dev/null
bindfs --no-allow-other "$work/bindfs-src" "$work/bindfs"
# Never measure the empty mountpoint directory in place of the filesystem.
grep -q " $work/cluster/mnt/node1 .* - fuse.etcfs " /proc/self/mountinfo \
  || { echo "bench: $work/cluster/mnt/node1 is not an etcfs mount" >&2; exit 1; }

drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true; }

# fio JOB DIR ARGS... -> prints "bw_bytes iops" of the job's read or write side
fio_run() {
  local side=$1 dir=$2; shift 2
  fio --directory="$dir" --output-format=json "$@" 2>/dev/null \
    | jq -r ".jobs[0].$side | \"\(.bw_bytes) \(.iops)\""
}

measure() { # DIR -> lines "test value unit"
  local d=$1
  drop_caches
  # no preallocation: etcfs writes a preallocated range's zeros at fallocate time, which fio
  # does not time (ext4 only marks the extents unwritten)
  read -r bw _ < <(fio_run write "$d" --name=seqw --filename=seq --rw=write --bs=1M --size="$size" --end_fsync=1 --fallocate=none)
  echo "seq-write+fsync $((bw / 1048576)) MiB/s"
  drop_caches
  read -r bw _ < <(fio_run read "$d" --name=seqr --filename=seq --rw=read --bs=1M --size="$size")
  echo "seq-read $((bw / 1048576)) MiB/s"
  # the same file again, caches kept: what the page cache serves (issue #13: >= 0.8x direct)
  read -r bw _ < <(fio_run read "$d" --name=seqrr --filename=seq --rw=read --bs=1M --size="$size")
  echo "seq-re-read $((bw / 1048576)) MiB/s"
  # fio preallocates its file first (untimed): the writes go over allocated blocks, as a
  # database's do; the sparse run after it fills holes at random instead
  read -r _ iops < <(fio_run write "$d" --name=randw --filename=rand --rw=randwrite --bs=4k --size="$rsize" --runtime="$rtime" --time_based --fsync_on_close=1)
  echo "4k-rand-write ${iops%.*} IOPS"
  read -r _ iops < <(fio_run write "$d" --name=randws --filename=rands --rw=randwrite --bs=4k --size="$rsize" --runtime="$rtime" --time_based --fsync_on_close=1 --fallocate=none)
  echo "4k-rand-sparse ${iops%.*} IOPS"
  drop_caches
  read -r _ iops < <(fio_run read "$d" --name=randr --filename=rand --rw=randread --bs=4k --size="$rsize" --runtime="$rtime" --time_based)
  echo "4k-rand-read ${iops%.*} IOPS"
  mkdir -p "$d/many"
  for engine in filecreate filestat filedelete; do
    read -r _ iops < <(fio_run read "$d/many" --name="$engine" --ioengine="$engine" --nrfiles="$files" --filesize=4k --openfiles=1 --filename_format='f.$filenum')
    echo "${engine#file} ${iops%.*} ops/s"
  done
  rm -f "$d/seq" "$d/rand" "$d/rands"
}

declare -A result unit
for target in direct bindfs etcfs; do
  case $target in
    direct) dir="$work/direct" ;;
    bindfs) dir="$work/bindfs" ;;
    etcfs) dir="$work/cluster/mnt/node1" ;;
  esac
  say "measuring $target ($dir)"
  while read -r test value u; do
    result[$target.$test]=$value
    unit[$test]=$u
  done < <(measure "$dir")
done

printf '\netcfs benchmark, %s, %s, %s cores, %s\n' "$(date -u +%Y-%m-%d)" "$(uname -r)" \
  "$(nproc)" "$(free -g | awk '/Mem:/{print $2 " GiB"}')"
printf '%-16s %-7s %10s %10s %10s %8s %8s %8s\n' test unit direct bindfs etcfs bindfs/d etcfs/d \
  etcfs/b
for test in seq-write+fsync seq-read seq-re-read 4k-rand-write 4k-rand-sparse 4k-rand-read \
    create stat delete; do
  d=${result[direct.$test]:-0} b=${result[bindfs.$test]:-0} e=${result[etcfs.$test]:-0}
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
  printf '%-16s %-7s %10s %10s %10s %8s %8s %8s\n' "$test" "${unit[$test]}" "$d" "$b" "$e" \
    "$(ratio "$b" "$d")" "$(ratio "$e" "$d")" "$(ratio "$e" "$b")"
done
