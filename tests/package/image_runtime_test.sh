#!/usr/bin/env bash
# image_runtime_test.sh BUILD_DIR SOURCE_DIR VERSION
#
# Whether conf-examples/Dockerfile's runtime stage gives the binaries everything they load,
# without Docker (CI has no engine) and without the network. The stage's file system is rebuilt
# from this host's Debian 12 packages: what debian:12-slim holds (the Essential and
# Priority: required packages), plus the packages the stage's `apt-get install` names and their
# Depends/Pre-Depends closure. Exactly those packages' files (dpkg -L) are copied into a scratch
# root with the binaries at the stage's COPY destinations, and each binary's --version runs
# there under chroot. A library the stage lacks is named with the package that provides it.
# Needs root (chroot); exit 77 (ctest: skipped) when not root, when a binary is not built, or
# when a package the Dockerfile names is not installed on this host.
set -euo pipefail

build=$(cd "$1" && pwd) src=$(cd "$2" && pwd) version=$3
dockerfile=$src/conf-examples/Dockerfile

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: chroot needs root"
  exit 77
fi
for bin in cilium-nomad-labeler cilium-nomad-cni; do
  [ -x "$build/bin/$bin" ] || { echo "SKIP: $build/bin/$bin is not built"; exit 77; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

echo "== the build stage's configure, without cpp-httplib"
# The build stage copies only some source directories and installs no cpp-httplib: configuring
# those with pkg-config finding nothing must work (cpp-httplib is the test fakes' alone).
build_stage=$(awk '/^FROM /{n++} n == 1' "$dockerfile")
mkdir -p "$work/src" "$work/no-pkgconfig"
while read -r from; do
  cp -r "$src/$from" "$work/src/"
done < <(grep -E '^COPY [^-]' <<<"$build_stage" | awk '{print $2}')
mapfile -t stage_options < <(grep -o -- '-DCN_[A-Z_]*=[A-Z]*' <<<"$build_stage")
if ! PKG_CONFIG_LIBDIR=$work/no-pkgconfig PKG_CONFIG_PATH='' \
    cmake -S "$work/src" -B "$work/src-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    "${stage_options[@]}" > "$work/configure.log" 2>&1; then
  cat "$work/configure.log"
  fail "the build stage's cmake configure fails without cpp-httplib"
fi

echo "== the runtime stage of $dockerfile"
# The last stage: from the last FROM to the end, with `\` continuations joined.
runtime_stage=$(awk '/^FROM /{stage=""} {stage = stage $0 "\n"} END {printf "%s", stage}' "$dockerfile" |
  sed -e ':a' -e '/\\$/N; s/\\\n//; ta')
grep -q '^FROM debian:12-slim' <<<"$runtime_stage" ||
  { echo "FAIL: the last stage is not FROM debian:12-slim: $(head -1 <<<"$runtime_stage")"; exit 1; }
# Every word after `apt-get install` up to the next `&&`, options left out.
named=$(grep -o 'apt-get install[^&]*' <<<"$runtime_stage" | sed 's/^apt-get install//' |
  tr -s ' \t' '\n' | grep -v '^-' | grep -v '^$' | sort -u || true)
[ -n "$named" ] || { echo "FAIL: no apt-get install in the runtime stage"; exit 1; }
echo "named: $(tr '\n' ' ' <<<"$named")"
# COPY --from=<stage> <build path of a binary> <destination in the image>
copies=$(grep -E '^COPY --from=[a-z]+ ' <<<"$runtime_stage" | awk '{print $3, $4}')

# One line per installed package: name, Essential, Priority, Depends + Pre-Depends, Provides.
dpkg-query -W -f='${db:Status-Status}\t${Package}\t${Essential}\t${Priority}\t${Depends}, ${Pre-Depends}\t${Provides}\n' |
  awk -F'\t' '$1 == "installed"' | cut -f2- > "$work/status"
declare -A is_installed=() depends=() provider=()
base=()
while IFS=$'\t' read -r pkg essential priority deps provides; do
  is_installed[$pkg]=1
  depends[$pkg]=$deps
  # debian:12-slim: the Essential and Priority: required packages.
  if [ "$essential" = yes ] || [ "$priority" = required ]; then base+=("$pkg"); fi
  provides=$(sed 's/([^)]*)//g; s/ //g' <<<"$provides")
  IFS=',' read -ra virtuals <<<"$provides"
  for v in "${virtuals[@]}"; do
    [ -z "$v" ] || [ -n "${provider[$v]:-}" ] || provider[$v]=$pkg
  done
done < "$work/status"

for pkg in $named; do
  if [ -z "${is_installed[$pkg]:-}" ]; then
    if apt-cache show "$pkg" >/dev/null 2>&1; then
      echo "SKIP: $pkg (named by the Dockerfile) is not installed on this host"
      exit 77
    fi
    fail "the Dockerfile names $pkg, which is no Debian 12 package"
  fi
done
[ "$failures" -eq 0 ] || exit 1

echo "== the package set"
declare -A in_set=()
queue=()
for pkg in "${base[@]}" $named; do
  [ -n "${in_set[$pkg]:-}" ] || { in_set[$pkg]=1; queue+=("$pkg"); }
done
while [ ${#queue[@]} -gt 0 ]; do
  pkg=${queue[0]}
  queue=("${queue[@]:1}")
  deps=$(sed 's/([^)]*)//g; s/ //g' <<<"${depends[$pkg]}")
  IFS=',' read -ra clauses <<<"$deps"
  for clause in "${clauses[@]}"; do
    [ -n "$clause" ] || continue
    # The first alternative an installed package satisfies, by name or as a virtual package.
    chosen=""
    IFS='|' read -ra alternatives <<<"$clause"
    for alt in "${alternatives[@]}"; do
      alt=${alt%%:*}
      if [ -n "${is_installed[$alt]:-}" ]; then chosen=$alt; else chosen=${provider[$alt]:-}; fi
      [ -n "$chosen" ] && break
    done
    if [ -z "$chosen" ]; then
      fail "$pkg depends on '$clause', which no installed package satisfies"
      continue
    fi
    [ -n "${in_set[$chosen]:-}" ] || { in_set[$chosen]=1; queue+=("$chosen"); }
  done
done
echo "${#in_set[@]} packages"

echo "== the scratch root"
root=$work/root
mkdir -p "$root/usr"
# Merged /usr as debian:12-slim has it: these links belong to no package.
for link in bin sbin lib lib64; do
  if [ -L "/$link" ]; then
    target=$(readlink "/$link")
    mkdir -p "$root/$target"
    ln -s "$target" "$root/$link"
  fi
done
: > "$work/files"
while IFS= read -r path; do
  # Directories come with their files; paths dpkg's path-exclude dropped do not exist.
  if [ -L "$path" ] || { [ -e "$path" ] && [ ! -d "$path" ]; }; then
    printf '%s\n' "${path#/}" >> "$work/files"
  fi
done < <(dpkg -L "${!in_set[@]}" | sort -u)
echo "$(wc -l < "$work/files") files"
tar -C / --no-recursion -cf - -T "$work/files" | tar -C "$root" --keep-directory-symlink -xf -
while read -r from to; do
  name=$(basename "$from")
  mkdir -p "$root$(dirname "$to")"
  cp "$build/bin/$name" "$root$to"
  echo "$name -> $to"
done <<<"$copies"
# What apt's libc-bin trigger leaves in the image.
ldconfig -r "$root"

echo "== shared libraries"
while read -r from to; do
  name=$(basename "$from")
  while read -r lib resolved; do
    [ -n "$resolved" ] || continue
    if [ ! -e "$root$resolved" ]; then
      # dpkg knows the path below merged /usr (/usr/lib/...), not the one through /lib.
      owner=$(dpkg -S "$(readlink -f "$(dirname "$resolved")")/$lib" 2>/dev/null | cut -d: -f1 || true)
      fail "$name needs $lib ($resolved), which the runtime stage lacks: add ${owner:-"(no package owns it)"} to its apt-get install"
    fi
  done < <(ldd "$build/bin/$name" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}')
done <<<"$copies"

echo "== --version in the image's file system"
while read -r from to; do
  name=$(basename "$from")
  if out=$(chroot "$root" /usr/bin/env -i "$to" --version 2>&1); then
    [ "$(head -1 <<<"$out")" = "$name v$version" ] || fail "$to --version printed '$out'"
    echo "$to --version: $(head -1 <<<"$out")"
  else
    fail "$to --version exited $?: $out"
  fi
done <<<"$copies"
[ "$(wc -l <<<"$copies")" -eq 2 ] || fail "expected the stage to copy two binaries: $copies"

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "the runtime stage runs both binaries"
