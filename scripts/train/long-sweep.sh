#!/usr/bin/env bash
# A sweep longer than one machine's stay: `rlvr sweep` runs on a machine that may be gone
# tomorrow, so each finished run's small files are kept in the repository and put back on the
# next machine, and every run is trained by one pinned build of rlvr (the checker decides the
# reward: a run scored by another build is another experiment).
#
#   scripts/train/long-sweep.sh restore KEEP           # before: finished runs back into runs/
#   scripts/train/long-sweep.sh binary KEEP            # prints the pinned build's rlvr (builds it once)
#   scripts/train/long-sweep.sh save KEEP              # after: finished runs into KEEP
#   scripts/train/long-sweep.sh watch KEEP [SECONDS]   # during: `save` every SECONDS (300)
#                                                      # while a run of the sweep trains
#
# KEEP is a directory under results/ holding:
#   sweep.toml        `dir` (the sweep directory, relative to the repository root), `commit`
#                     (the build every run uses: `cargo build --release -p rlvr-cli` at that
#                     commit, in a worktree under runs/), `command` (the sweep's arguments)
#   sweep-config.toml, sweep-overrides.txt   the sweep's pinned config (written by rlvr sweep)
#   <cell>/           per finished run: config.toml, metrics.jsonl, host.jsonl, train.log,
#                     sweep.done, eval-samples.jsonl.gz (its evaluations' samples, gzipped, so a
#                     later checker can score them again; no checkpoint: a finished run needs none)
#
# `save` copies every finished cell not yet kept and refuses one kept with different files (the
# same run computed twice must agree: docs/determinism.md), then removes the checkpoints of the
# kept runs from the sweep directory (gigabytes each for a real model); `restore` copies kept cells whose
# directory is absent or has no run in it, and refuses to overwrite a half-finished run with
# another machine's files. Runs still training are not kept: a stopped run restarts from
# nothing on the next machine, so keep a sweep's machine until its running cells finish.
# `watch` runs `save` as runs finish, so a disk that holds two runs' checkpoints holds the whole
# sweep: it saves every SECONDS while any cell's run.lock names a live process, and once more
# when none does (checked twice, 5 s apart: the sweep starts its next cell in between).
set -euo pipefail
cd "$(dirname "$0")/../.."

die() { echo "long-sweep: $*" >&2; exit 1; }
action=${1:-}
case "$action:$#" in
    restore:2 | binary:2 | save:2 | watch:2 | watch:3) ;;
    *) die "usage: $0 restore|binary|save KEEP, or $0 watch KEEP [SECONDS]" ;;
esac
keep=${2%/}
[ -f "$keep/sweep.toml" ] || die "$keep/sweep.toml: missing (it names the sweep directory and the pinned commit)"
field() { # key: a `key = "value"` line of sweep.toml
    local v
    v=$(sed -n "s/^$1 *= *\"\\(.*\\)\"\$/\\1/p" "$keep/sweep.toml")
    [ -n "$v" ] || die "$keep/sweep.toml: no \`$1 = \"...\"\` line"
    printf '%s' "$v"
}
dir=$(field dir)
case "$dir" in /* | *..*) die "$keep/sweep.toml: dir = \"$dir\" must be a path inside the repository" ;; esac
commit=$(field commit)
[[ "$commit" =~ ^[0-9a-f]{40}$ ]] || die "$keep/sweep.toml: commit = \"$commit\" is not a full commit hash"

run_files=(config.toml metrics.jsonl host.jsonl train.log sweep.done eval-samples.jsonl)
# eval-samples.jsonl (every in-run evaluation's samples, for scoring again by a later checker) is
# written by builds from 2026-12-08 on; a run of an older build has none
optional_files=(eval-samples.jsonl)
optional() { local f; for f in "${optional_files[@]}"; do [ "$1" = "$f" ] && return 0; done; return 1; }
pinned_files=(sweep-config.toml sweep-overrides.txt)

# The cells (relative paths) that hold a finished run under $1.
finished_cells() {
    [ -d "$1" ] || return 0
    (cd "$1" && find . -name sweep.done -type f -printf '%h\n' | sed 's|^\./||' | sort)
}

# eval-samples.jsonl is kept gzipped (`eval-samples.jsonl.gz`, `gzip -n`: no name or time in it,
# so the same file compresses to the same bytes): a real model's run writes some 700 kB of it.
packed() { [ "$1" = eval-samples.jsonl ]; }

keep_cell() { # from (a sweep cell) to (a kept cell)
    mkdir -p "$2"
    for f in "${run_files[@]}"; do
        if [ ! -f "$1/$f" ]; then
            optional "$f" && continue
            die "$1/$f: missing from a finished run"
        fi
        if packed "$f"; then
            gzip -n -c "$1/$f" >"$2/$f.gz"
        else
            cp "$1/$f" "$2/$f"
        fi
    done
}

put_back_cell() { # from (a kept cell) to (a sweep cell)
    mkdir -p "$2"
    for f in "${run_files[@]}"; do
        if packed "$f" && [ -f "$1/$f.gz" ]; then
            gunzip -c "$1/$f.gz" >"$2/$f"
        elif [ -f "$1/$f" ]; then
            cp "$1/$f" "$2/$f"
        elif ! optional "$f"; then
            die "$1/$f: missing from a kept run"
        fi
    done
}

same_files() { # a b: the run files of two cells are identical
    for f in "${run_files[@]}"; do
        # train.log holds timings; the others hold what the run computed (metrics carry timing
        # fields too, so two machines' metrics are compared without them)
        case $f in
            train.log | host.jsonl | sweep.done) continue ;;
            metrics.jsonl)
                python3 - "$1/$f" "$2/$f" <<'PY' || return 1
import json, sys
def strip(path):
    out = []
    for line in open(path):
        d = json.loads(line)
        out.append({k: v for k, v in d.items()
                    if not (k.startswith("time") or k.endswith("_per_s") or k in ("secs", "wall_s"))})
    return out
sys.exit(0 if strip(sys.argv[1]) == strip(sys.argv[2]) else 1)
PY
                ;;
            *)
                if packed "$f"; then
                    # $1 is the sweep's cell, $2 the kept one (gzipped)
                    if [ ! -f "$1/$f" ] && [ ! -f "$2/$f.gz" ]; then continue; fi
                    [ -f "$1/$f" ] && [ -f "$2/$f.gz" ] || return 1
                    gunzip -c "$2/$f.gz" | cmp -s "$1/$f" - || return 1
                    continue
                fi
                cmp -s "$1/$f" "$2/$f" || return 1
                ;;
        esac
    done
}

save_now() {
    [ -d "$dir" ] || die "$dir: no such sweep directory"
    for f in "${pinned_files[@]}"; do
        if [ -f "$keep/$f" ]; then
            cmp -s "$dir/$f" "$keep/$f" || die "$dir/$f differs from $keep/$f: another sweep"
        else
            cp "$dir/$f" "$keep/$f"
        fi
    done
    n=0
    freed=0
    while read -r cell; do
        [ -n "$cell" ] || continue
        if [ -f "$keep/$cell/sweep.done" ]; then
            same_files "$dir/$cell" "$keep/$cell" \
                || die "$cell: finished here with other results than the kept run ($keep/$cell): the same run computed twice disagrees"
        else
            keep_cell "$dir/$cell" "$keep/$cell"
            echo "long-sweep: kept $cell"
            n=$((n + 1))
        fi
        # a finished and kept run needs no checkpoint: a real model's are gigabytes each, and
        # a sweep's finished runs otherwise fill the disk under the ones still training
        for c in "$dir/$cell"/checkpoint "$dir/$cell"/checkpoint-step*; do
            [ -e "$c" ] || continue
            rm -rf "$c"
            freed=$((freed + 1))
        done
    done < <(finished_cells "$dir")
    echo "long-sweep: $n new finished run(s) kept in $keep ($(finished_cells "$keep" | wc -l) in all); $freed checkpoint(s) of kept runs removed"
}

# Whether a process named by a cell's run.lock under the sweep directory is alive.
training() {
    local lock pid
    while read -r lock; do
        pid=$(head -c 32 "$lock" 2>/dev/null | tr -dc 0-9)
        [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && return 0
    done < <(find "$dir" -name run.lock -type f 2>/dev/null)
    return 1
}

case $action in
    save)
        save_now
        ;;
    restore)
        mkdir -p "$dir"
        for f in "${pinned_files[@]}"; do
            [ -f "$keep/$f" ] || continue
            if [ -f "$dir/$f" ]; then
                cmp -s "$dir/$f" "$keep/$f" || die "$dir/$f differs from $keep/$f: another sweep"
            else
                cp "$keep/$f" "$dir/$f"
            fi
        done
        n=0
        while read -r cell; do
            [ -n "$cell" ] || continue
            [ -f "$dir/$cell/sweep.done" ] && continue
            if [ -d "$dir/$cell" ] && [ -n "$(ls -A "$dir/$cell")" ]; then
                die "$dir/$cell: a run is in progress there; finish or remove it before restoring the kept one"
            fi
            put_back_cell "$keep/$cell" "$dir/$cell"
            n=$((n + 1))
        done < <(finished_cells "$keep")
        echo "long-sweep: $n finished run(s) restored into $dir"
        ;;
    binary)
        bin="runs/long-sweep-build/$commit/target/release/rlvr"
        if [ ! -x "$bin" ]; then
            src="runs/long-sweep-build/$commit/src"
            git cat-file -e "$commit^{commit}" 2>/dev/null || die "commit $commit is not in this clone"
            if [ ! -d "$src" ]; then
                git worktree add --detach "$src" "$commit" >&2
            fi
            echo "long-sweep: building rlvr at $commit (once per machine)" >&2
            cargo build --release -p rlvr-cli --manifest-path "$src/Cargo.toml" \
                --target-dir "runs/long-sweep-build/$commit/target" >&2
        fi
        echo "$bin"
        ;;
    watch)
        interval=${3:-300}
        [[ "$interval" =~ ^[1-9][0-9]*$ ]] || die "watch: SECONDS = \"$interval\" is not a positive whole number"
        [ -d "$dir" ] || die "$dir: no such sweep directory"
        while true; do
            save_now
            if ! training; then
                sleep 5
                training || { save_now; break; }
            fi
            sleep "$interval"
        done
        echo "long-sweep: no run of $dir is training; stopped watching"
        ;;
    *) die "unknown action '$action' (restore, binary, save or watch)" ;;
esac
