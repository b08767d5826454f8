#!/usr/bin/env bash
# The shell completions and the man page against the binary: every long flag of every `rsz <command> --help` is
# offered by the bash completion for that command and listed in the zsh one, and nothing else is; completing
# works (flags, choice values); the man page (when help2man built it) documents every command and flag.
# usage: completion_check.sh RSZ_BINARY SOURCE_DIR [MAN_PAGE]
set -euo pipefail
rsz=$1
src=$2
man=${3:-}
bash_script=$src/app/completions/rsz.bash
zsh_script=$src/app/completions/_rsz
# shellcheck source=/dev/null
source "$bash_script"
status=0
fail() { echo "completion check: $*" >&2; status=1; }

for command in resample thumbnail upsample roi-align run plan merge info; do
  help_flags=$("$rsz" "$command" --help | grep -oE '^\s+(-[a-zA-Z],)?--[a-z0-9-]+' | grep -oE -- '--[a-z0-9-]+' | sort -u)
  bash_flags=$(_rsz_flags "$command" | tr -s ' \n' '\n' | grep -E -- '^--' | sort -u)
  if [[ $help_flags != "$bash_flags" ]]; then
    fail "$command: bash completion flags differ from --help:"
    diff <(echo "$help_flags") <(echo "$bash_flags") >&2 || true
  fi
  for flag in $help_flags; do
    grep -qE -- "$flag(\\[|\})" "$zsh_script" || fail "$command: $flag missing from the zsh completion"
    if [[ -n $man ]]; then grep -q -- "${flag//-/\\\\-}" "$man" || fail "$command: $flag missing from the man page"; fi
  done
  if [[ -n $man ]]; then grep -q "$command" "$man" || fail "$command missing from the man page"; fi
done

# Completing as bash would.
complete_words() {
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _rsz
  echo "${COMPREPLY[*]}"
}
[[ $(complete_words rsz roi) == roi-align ]] || fail "subcommand: got '$(complete_words rsz roi)'"
[[ $(complete_words rsz roi-align --man) == --manifest ]] || fail "flag: got '$(complete_words rsz roi-align --man)'"
[[ $(complete_words rsz resample --preset al) == align_corners ]] || fail "choice: got '$(complete_words rsz resample --preset al)'"
[[ $(complete_words rsz roi-align --reduction '') == "average max" ]] || fail "choices: got '$(complete_words rsz roi-align --reduction '')'"
[[ -z $(complete_words rsz resample --scale '') ]] || fail "a value flag offered something"
if [[ -n $man ]]; then grep -q '^\.TH RSZ' "$man" || fail "$man has no .TH header"; fi
[[ $status -eq 0 ]] && echo "completion check: ok"
exit $status
