#!/usr/bin/env bash
# rsz on a real Slurm (scripts/slurm-local.sh: Debian's slurmctld, slurmd and munge on this machine): rsz plan, a job
# array of 4 elements running rsz thumbnail --plan STATE --shard $SLURM_ARRAY_TASK_ID, element 2 killed (SIGKILL,
# scancel --signal=KILL) after it wrote a few outputs, rsz merge naming --array=2, that element resubmitted alone
# with the array text merge printed, then rsz merge exiting 0 and the outputs byte-identical to one rsz process over
# the same inputs. Every output present after the kill must already be complete (the bytes of the uninterrupted
# run): a kill leaves whole outputs or none, at most a temporary .NAME.tmp-* beside them, which rsz merge --clean
# must remove.
#
# usage: slurm_test.sh RSZ SOURCE_DIR   (exit 77, "skip: ...", where Slurm cannot run: not root, not installed)
set -euo pipefail
rsz=$(realpath "$1")
src=$(realpath "$2")
work=$(mktemp -d "${TMPDIR:-/tmp}/rsz-slurm-test.XXXXXX")
chmod 755 "$work"  # munged runs as the munge user, in a folder below this one
slurm_dir=$work/slurm
started=$SECONDS
cleanup() {
  local rc=$?
  bash "$src/scripts/slurm-local.sh" stop "$slurm_dir" || true
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
say() { echo "slurm_test: [$((SECONDS - started)) s] $*"; }
fail() {
  echo "slurm_test: FAIL: $*" >&2
  for log in "$work"/logs/*.log "$slurm_dir"/slurmctld.log "$slurm_dir"/slurmd.log; do
    [[ -f $log ]] && { echo "--- $log (end)" >&2; tail -n 15 "$log" >&2; }
  done
  exit 1
}

rc=0
out=$(bash "$src/scripts/slurm-local.sh" start "$slurm_dir") || rc=$?
((rc == 77)) && exit 77
((rc == 0)) || fail "scripts/slurm-local.sh start exited $rc"
export "${out##*$'\n'}"  # SLURM_CONF=...
say "Slurm up: $(sinfo -h -o '%P %a %D %T' | head -n1)"

cd "$work"
mkdir logs
bash "$src/tests/engines/make_dataset.sh" "$rsz" "$src" ds 200
"$rsz" thumbnail -i ds -r --size 64 -o 'ref/{relpath}{ext}' -q -j 2
"$rsz" plan -i ds -r --shards 4 -o state -q
say "dataset: $(find ds -type f | wc -l) images; the single-process run wrote $(find ref -type f | wc -l) thumbnails"

# The array's batch script. RSZ_SLOW_SHARD=I makes element I slow so that it can be killed mid-way: rsz (one
# thread) runs 10 ms of every 250 ms, stopped and continued by this script (the inputs are a few ms each).
cat >thumbs.sbatch <<EOF
#!/bin/bash
#SBATCH --job-name=rsz-thumbs
#SBATCH --cpus-per-task=1
#SBATCH --output=$work/logs/thumbs-%A_%a.log
set -u
cmd=("$rsz" thumbnail --plan "$work/state" --shard "\$SLURM_ARRAY_TASK_ID" --size 64 -o "$work/out/{relpath}{ext}"
     -q -j 1)
if [[ "\${RSZ_SLOW_SHARD:-}" == "\$SLURM_ARRAY_TASK_ID" ]]; then
  "\${cmd[@]}" &
  pid=\$!
  while kill -0 "\$pid" 2>/dev/null; do
    sleep 0.01; kill -STOP "\$pid" 2>/dev/null; sleep 0.25; kill -CONT "\$pid" 2>/dev/null
  done
  wait "\$pid"
else
  exec "\${cmd[@]}"
fi
EOF

# wait_job ID [SECONDS]: until the job (all its elements) has left the queue, at most SECONDS (default 90).
wait_job() {
  local limit=${2:-90}
  local deadline=$((SECONDS + limit))
  while [[ -n $(squeue -h -j "$1" -o %i 2>/dev/null) ]]; do
    ((SECONDS < deadline)) ||
      fail "job $1 still queued after $limit s: $(squeue -h -j "$1" -o '%i %T %R' | tr '\n' ' ')"
    sleep 0.2
  done
}
# outputs_of SHARD: how many of the shard's inputs have their output (out/ + the path below ds).
outputs_of() {
  local n=0 path
  while IFS=$'\t' read -r path _; do
    [[ -f out/${path#ds/} ]] && n=$((n + 1))
  done <"state/shards/$(printf '%05d' "$1").txt"
  echo "$n"
}
inputs_of() { wc -l <"state/shards/$(printf '%05d' "$1").txt"; }

job=$(sbatch --parsable --array=0-3 --export=ALL,RSZ_SLOW_SHARD=2 --chdir="$work" thumbs.sbatch)
job=${job%%;*}
say "submitted array job $job (0-3; element 2 slowed)"
total2=$(inputs_of 2)
((total2 >= 10)) || fail "shard 2 holds $total2 inputs; the test needs at least 10"
deadline=$((SECONDS + 90))
while :; do
  n=$(outputs_of 2)
  ((n >= 3)) && break
  ((SECONDS < deadline)) || fail "element 2 wrote $n outputs in 90 s"
  sleep 0.02
done
scancel --signal=KILL --full "${job}_2"
say "element ${job}_2 killed (SIGKILL) after it wrote $n of $total2 outputs"
((n < total2)) || fail "element 2 finished before it was killed"
wait_job "$job"
n=$(outputs_of 2)
say "array done; shard 2 has $n of $total2 outputs"
((n < total2)) || fail "element 2 finished before it was killed"

# Killed: every output present is whole (the uninterrupted run's bytes); temporaries are reported, not compared.
tmps=$(find out -name '.*.tmp-*' | wc -l)
while IFS= read -r -d '' f; do
  rel=${f#out/}
  [[ -f ref/$rel ]] || fail "$f: no such output in the single-process run"
  cmp -s "$f" "ref/$rel" || fail "$f differs from the single-process run's output after the kill (half-written)"
done < <(find out -type f ! -name '.*.tmp-*' -print0)
say "after the kill: $(find out -type f ! -name '.*.tmp-*' | wc -l) outputs, all complete;" \
  "$tmps temporary file(s) left by the kill"

rc=0
report=$("$rsz" merge state --json) || rc=$?
((rc == 1)) || fail "rsz merge exited $rc with shard 2 unfinished: $report"
rerun=$(sed -n 's/.*"rerun":"\([^"]*\)".*/\1/p' <<<"$report")
[[ $rerun == 2 ]] || fail "rsz merge's rerun is '$rerun', not 2: $report"
job2=$(sbatch --parsable --array="$rerun" --chdir="$work" thumbs.sbatch)
job2=${job2%%;*}
say "resubmitted --array=$rerun as job $job2"
wait_job "$job2"

rc=0
"$rsz" merge state >merge.txt 2>&1 || rc=$?
((rc == 0)) || fail "rsz merge exited $rc after the resubmission: $(cat merge.txt)"
marker=$(tr -d ' \n' <state/done/00002.json)
grep -q '"status":0' <<<"$marker" || fail "shard 2's marker: $marker"
kept=$(sed -n 's/.*"kept":\([0-9]*\).*/\1/p' <<<"$marker")
((kept >= 3)) || fail "the resubmitted element kept $kept outputs of the killed one (expected >= 3): $marker"
# rsz merge --clean removes what the kill left (temporaries untouched for a minute: made older here).
tmps=$(find out -name '.*.tmp-*' | wc -l)
if ((tmps > 0)); then
  find out -name '.*.tmp-*' -exec touch -d '-2 minutes' {} +
  "$rsz" merge state --clean >/dev/null 2>&1 || fail "rsz merge --clean exited $?"
  left=$(find out -name '.*.tmp-*' | wc -l)
  ((left == 0)) || fail "rsz merge --clean left $left temporary file(s) of the killed element"
  say "rsz merge --clean removed the $tmps temporary file(s) the kill left"
fi
# The whole result: the same files, byte for byte, as the single-process run.
(cd ref && find . -type f | sort) >ref.list
(cd out && find . -type f ! -name '.*.tmp-*' | sort) >out.list
diff ref.list out.list >/dev/null || fail "the file lists differ: $(diff ref.list out.list | head -n 5 | tr '\n' ' ')"
while IFS= read -r f; do
  cmp -s "ref/$f" "out/$f" || fail "$f differs from the single-process run"
done <ref.list
say "rsz merge: $(tail -n 2 merge.txt | head -n 1)"
say "kill and resume passed: $(wc -l <ref.list) outputs byte-identical to the single-process run; element 2" \
  "resumed keeping $kept outputs"

# ---- The Slurm recipe of docs/SCALE.md, as written ----
# Its script (<!-- example: slurm-script -->) and its steps (<!-- example: slurm-steps -->) run in a fresh folder
# holding photos/; where the node is smaller than the script asks (--cpus-per-task, --mem), the script as written must
# stay PENDING (as the docs say) and the docs' smaller-node sbatch line runs it instead.
doc=$src/docs/SCALE.md
# doc_block NAME: the code block marked <!-- example: NAME --> in docs/SCALE.md.
doc_block() {
  awk -v mark="<!-- example: $1 -->" '
    $0 == mark { found = 1; next }
    found && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }' "$doc"
}
recipe=$work/recipe
mkdir "$recipe"
cd "$recipe"
bash "$src/tests/engines/make_dataset.sh" "$rsz" "$src" photos 40
"$rsz" thumbnail -i photos -r --size 256 -o 'ref/{relpath}{ext}' -q -j 2
doc_block slurm-script >thumbs.sbatch
grep -q '^#SBATCH' thumbs.sbatch || fail "docs/SCALE.md: no block marked slurm-script"
steps=$(doc_block slurm-steps)
grep -q '^sbatch ' <<<"$steps" || fail "docs/SCALE.md: no block marked slurm-steps with an sbatch line"
smaller=$(grep -o 'sbatch --cpus-per-task=[0-9]* --mem=[0-9]*[KMGT]* thumbs.sbatch' "$doc" | head -n1)
[[ -n $smaller ]] || fail "docs/SCALE.md no longer shows the sbatch line for smaller nodes"
cpus=$(sed -n 's/^#SBATCH --cpus-per-task=\([0-9]*\).*/\1/p' thumbs.sbatch)
mem_gb=$(sed -n 's/^#SBATCH --mem=\([0-9]*\)G.*/\1/p' thumbs.sbatch)
node_cpus=$(sinfo -h -N -o %c | head -n1)
node_mb=$(sinfo -h -N -o %m | head -n1)
say "docs/SCALE.md's Slurm recipe: the script asks for ${cpus:-?} CPUs and ${mem_gb:-?} GB; the node has" \
  "$node_cpus CPUs and $node_mb MB"
export PATH="$(dirname "$rsz"):$PATH"  # the recipe's `rsz`; sbatch passes the environment on to the elements
started_recipe=$SECONDS
while IFS= read -r line; do
  [[ -n $line ]] || continue
  if [[ $line != sbatch\ * ]]; then
    eval "$line" </dev/null >recipe-step.log 2>&1 || fail "docs/SCALE.md's step '$line' exited $?: $(tail -n 5 recipe-step.log)"
    continue
  fi
  if [[ -n $cpus && -n $mem_gb ]] && ((cpus <= node_cpus && mem_gb * 1024 <= node_mb)); then
    submit=$line
  else
    # Too big for this node: as written, sbatch refuses it or the array stays PENDING (reason PartitionConfig).
    rc=0
    out=$(eval "$line" </dev/null 2>&1) || rc=$?
    if ((rc == 0)); then
      big=$(sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' <<<"$out")
      [[ -n $big ]] || fail "'$line' printed no job id: $out"
      deadline=$((SECONDS + 20))
      until [[ $(squeue -h -j "$big" -o '%T %r' | sort -u) == "PENDING PartitionConfig" ]]; do
        ((SECONDS < deadline)) || fail "'$line' on a smaller node: not PENDING (PartitionConfig) but" \
          "$(squeue -h -j "$big" -o '%T %r' | sort -u | tr '\n' ' ')"
        sleep 0.2
      done
      scancel "$big"
      wait_job "$big"
      say "as written, the array stays PENDING (PartitionConfig) on this node; submitting '$smaller'"
    else
      grep -q 'Requested node configuration is not available' <<<"$out" || fail "'$line' exited $rc: $out"
      say "as written, sbatch refuses the array on this node; submitting '$smaller'"
    fi
    submit=$smaller
  fi
  out=$(eval "$submit" </dev/null 2>&1) || fail "'$submit' exited $?: $out"
  id=$(sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' <<<"$out")
  [[ -n $id ]] || fail "'$submit' printed no job id: $out"
  wait_job "$id" 240
done <<<"$steps"
# The last step was rsz merge: every shard done. The thumbnails are one process's, and each element wrote its log.
(cd ref && find . -type f | sort) >ref.list
(cd thumbs && find . -type f | sort) >thumbs.list
diff ref.list thumbs.list >/dev/null ||
  fail "the recipe's thumbnails differ from one rsz process's: $(diff ref.list thumbs.list | head -n 5 | tr '\n' ' ')"
while IFS= read -r f; do
  cmp -s "ref/$f" "thumbs/$f" || fail "the recipe's $f differs from the single-process run"
done <ref.list
logs=$(find logs -name 'thumbs-*.log' | wc -l)
elements=$(sed -n 's/^#SBATCH --array=0-\([0-9]*\).*/\1/p' thumbs.sbatch)
((logs == elements + 1)) || fail "the recipe's array left $logs logs in logs/, not $((elements + 1))"
say "PASS: docs/SCALE.md's Slurm recipe: $(wc -l <ref.list) thumbnails, byte-identical to one rsz process;" \
  "$logs array elements in $((SECONDS - started_recipe)) s"
