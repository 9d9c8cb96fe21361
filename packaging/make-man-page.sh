#!/bin/sh
# make-man-page.sh BIN_DIR PROGRAM SUMMARY INCLUDE OUTPUT [--subcommands]
#
# Writes OUTPUT (gzip -9n, as Debian ships man pages) from PROGRAM's own --help and --version
# through help2man, plus the static sections in INCLUDE (help2man's include format). With
# --subcommands, every subcommand PROGRAM's --help lists (and theirs, one level down) gets a
# COMMANDS subsection made from its own --help, so a new subcommand is documented without an
# edit here. PROGRAM runs by its bare name from BIN_DIR, so that the usage lines name the
# command and not the build tree.
set -eu

bin_dir=$1 program=$2 summary=$3 include=$4 output=$5 discover=${6:-}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
PATH="$bin_dir:$PATH"
export PATH

# The names CLI11 lists under "Subcommands:" in `PROGRAM ARGS... --help`.
subcommands_of() {
  # shellcheck disable=SC2068 # word splitting of the chain is intended
  "$program" $@ --help | awk '/^Subcommands:/ { in_list = 1; next }
                              /^[^ ]/ { in_list = 0 }
                              in_list && /^  [a-z]/ { print $1 }'
}

cp "$include" "$work/include.h2m"
if [ "$discover" = "--subcommands" ]; then
  : > "$work/subcommands"
  for sub in $(subcommands_of); do
    nested=$(subcommands_of "$sub")
    if [ -z "$nested" ]; then
      echo "$sub" >> "$work/subcommands"
    else
      for leaf in $nested; do echo "$sub $leaf" >> "$work/subcommands"; done
    fi
  done
  printf '[COMMANDS]\n' >> "$work/include.h2m"
  while read -r sub; do
    printf '.SS "%s %s"\n' "$program" "$sub" >> "$work/include.h2m"
    # shellcheck disable=SC2086 # "policy status" is two words on purpose
    "$program" $sub --help < /dev/null > "$work/sub.txt"
    # CLI11's help: a description, "Usage: ...", headings ("Options:"), option lines
    # and positionals ("  --name TYPE=default   what it does"; the text goes on the next,
    # deeply indented line when the name is long). Those become .TP paragraphs, everything
    # else a plain paragraph.
    awk '
      function roff(s) { gsub(/\\/, "\\e", s); if (s ~ /^[.'"'"']/) s = "\\&" s; return s }
      function dashes(s) { gsub(/-/, "\\-", s); return s }
      /^[ \t]*$/ { next }
      /^      +[^ ]/ { line = $0; sub(/^ +/, "", line); print roff(line); next }
      /^  +[^ ]/ {
        line = $0; sub(/^ +/, "", line)
        if (match(line, /   */)) {
          name = substr(line, 1, RSTART - 1); text = substr(line, RSTART + RLENGTH)
        } else { name = line; text = "" }
        printf ".TP\n\\fB%s\\fR\n", dashes(roff(name))
        if (text != "") print roff(text)
        next
      }
      { printf ".PP\n%s\n", roff($0) }
    ' "$work/sub.txt" >> "$work/include.h2m"
  done < "$work/subcommands"
fi

help2man --no-info --section=1 --name="$summary" --include="$work/include.h2m" \
  --output="$work/page.1" "$program"
gzip -9nc "$work/page.1" > "$output"
