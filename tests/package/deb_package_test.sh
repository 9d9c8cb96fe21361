#!/usr/bin/env bash
# deb_package_test.sh BUILD_DIR SOURCE_DIR VERSION
#
# Builds the .deb from BUILD_DIR the documented way (target cn_package_files, then cpack),
# unpacks it into a scratch root (dpkg-deb -x) and checks what an operator gets: the file list
# (no /usr/local, the unit, tmpfiles.d, the environment file as a conffile, man pages, docs),
# the Depends line dpkg-shlibdeps computed, the unit's paths, the installed binaries' `version`
# and `--version`, and lintian. Then `cmake --install` into a scratch DESTDIR with the tree's
# own prefix, whose unit must name that prefix. Exit 77 (ctest: skipped) only when a tool is
# missing; scripts/install-deps.sh installs them all.
set -euo pipefail

build=$(cd "$1" && pwd) src=$(cd "$2" && pwd) version=$3

for tool in cpack dpkg-deb dpkg-shlibdeps file help2man lintian gzip systemd-analyze; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool is not installed (scripts/install-deps.sh installs it)"
    exit 77
  fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

echo "== building the package"
cmake --build "$build" --target cn_package_files > "$work/build.log" 2>&1 ||
  { cat "$work/build.log"; echo "FAIL: cmake --build --target cn_package_files"; exit 1; }
(cd "$work" && cpack --config "$build/CPackConfig.cmake" -B "$work/out") > "$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; echo "FAIL: cpack"; exit 1; }
debs=("$work"/out/*.deb)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] || { ls -l "$work/out"; echo "FAIL: not one .deb"; exit 1; }
deb=${debs[0]}
echo "built $(basename "$deb")"

echo "== control fields"
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = cilium-nomad ] || fail "Package is '$(field Package)'"
[ "$(field Version)" = "$version-1" ] || fail "Version is '$(field Version)', expected $version-1"
[ "$(field Architecture)" = "$(dpkg --print-architecture)" ] || fail "Architecture is '$(field Architecture)'"
depends=$(field Depends)
echo "Depends: $depends"
depends_names=$(sed 's/ ([^)]*)//g; s/, /\n/g' <<<"$depends")
for lib in libc6 libstdc++6 libgcc-s1 libcurl4 libprometheus-cpp-core1.0 libyaml-cpp0.7 libre2-9; do
  grep -qxF "$lib" <<<"$depends_names" || fail "Depends lacks $lib"
done
# A sanitizer runtime there would mean the package was built from an instrumented tree.
grep -Eq "libasan|libubsan|libtsan" <<<"$depends" && fail "Depends names a sanitizer runtime"
# The status server is the labeler's own (labeler/serve/status_server.cpp); only the test fakes use httplib.
grep -q "libcpp-httplib" <<<"$depends" && fail "Depends names cpp-httplib"

echo "== file list"
dpkg-deb -c "$deb" > "$work/contents"
# "mode owner/group size date time ./path [-> target]"
awk '{print $6}' "$work/contents" | sed 's|^\./|/|; s|/$||' | grep -v '^$' | sort > "$work/paths"
grep -q '^/usr/local' "$work/paths" && fail "files under /usr/local: $(grep '^/usr/local' "$work/paths" | tr '\n' ' ')"
awk '$2 != "root/root" {print}' "$work/contents" | grep -q . &&
  fail "entries not owned by root/root: $(awk '$2 != "root/root"' "$work/contents")"
expect_file() {  # PATH MODE
  local line
  line=$(awk -v p=".$1" '$6 == p' "$work/contents")
  if [ -z "$line" ]; then
    fail "missing $1"
  elif [ "${line%% *}" != "$2" ]; then
    fail "$1 has mode ${line%% *}, expected $2"
  fi
}
expect_file /usr/bin/cilium-nomad-labeler -rwxr-xr-x
expect_file /opt/cni/bin/cilium-nomad-cni -rwxr-xr-x
expect_file /lib/systemd/system/cilium-nomad-labeler.service -rw-r--r--
expect_file /usr/lib/tmpfiles.d/cilium-nomad.conf -rw-r--r--
expect_file /etc/default/cilium-nomad-labeler -rw-------
expect_file /usr/share/man/man1/cilium-nomad-labeler.1.gz -rw-r--r--
expect_file /usr/share/man/man1/cilium-nomad-cni.1.gz -rw-r--r--
expect_file /usr/share/doc/cilium-nomad/README.md -rw-r--r--
expect_file /usr/share/doc/cilium-nomad/copyright -rw-r--r--
expect_file /usr/share/doc/cilium-nomad/changelog.Debian.gz -rw-r--r--
expect_file /usr/share/lintian/overrides/cilium-nomad -rw-r--r--
for example in "$src"/conf-examples/*; do
  expect_file "/usr/share/doc/cilium-nomad/examples/$(basename "$example")" -rw-r--r--
done

mkdir -p "$work/control"
dpkg-deb -e "$deb" "$work/control"
[ "$(cat "$work/control/conffiles")" = /etc/default/cilium-nomad-labeler ] ||
  fail "conffiles is '$(cat "$work/control/conffiles" 2>/dev/null)'"

echo "== unpacked files"
root=$work/root
dpkg-deb -x "$deb" "$root"
unit=$root/lib/systemd/system/cilium-nomad-labeler.service
grep -q '^ExecStart=/usr/bin/cilium-nomad-labeler run ' "$unit" || fail "ExecStart does not run /usr/bin/cilium-nomad-labeler"
grep -qx 'EnvironmentFile=-/etc/default/cilium-nomad-labeler' "$unit" || fail "no EnvironmentFile=-/etc/default/cilium-nomad-labeler"
# Every file:// and man: page the unit's Documentation= names must be in the package.
doc_line=$(grep '^Documentation=' "$unit") || fail "no Documentation="
for uri in ${doc_line#Documentation=}; do
  case $uri in
    file://*) [ -f "$root${uri#file://}" ] || fail "Documentation= names $uri, which the package lacks" ;;
    man:*) page=${uri#man:}; name=${page%(*}; section=${page##*(}; section=${section%)}
           [ -f "$root/usr/share/man/man$section/$name.$section.gz" ] || fail "Documentation= names $uri, which the package lacks" ;;
    *) fail "Documentation= names $uri, which is neither file:// nor man:" ;;
  esac
done
# systemd's own reading of the unit, with ExecStart pointed at the unpacked binary; it exits 0
# on unknown keys, so any output fails.
mkdir -p "$work/verify"
sed "s|=/usr/bin/cilium-nomad-labeler |=$root/usr/bin/cilium-nomad-labeler |" "$unit" \
  > "$work/verify/cilium-nomad-labeler.service"
verify=$(systemd-analyze verify --man=no "$work/verify/cilium-nomad-labeler.service" 2>&1) &&
  [ -z "$verify" ] || fail "systemd-analyze verify: $verify"
grep -qx 'd /run/cilium-nomad 0700 root root -' "$root/usr/lib/tmpfiles.d/cilium-nomad.conf" ||
  fail "tmpfiles.d entry does not create /run/cilium-nomad 0700 root"
grep -qx 'd /var/lib/cilium-nomad/policies 0755 root root -' "$root/usr/lib/tmpfiles.d/cilium-nomad.conf" ||
  fail "tmpfiles.d entry does not create the policy directory /var/lib/cilium-nomad/policies 0755 root"
grep -q -- '--policy-dir /var/lib/cilium-nomad/policies' "$unit" || fail "the unit passes no --policy-dir"
grep -qx 'StateDirectory=cilium-nomad/policies' "$unit" || fail "the unit does not make the policy directory writable"

# The environment file sets nothing, and documents every variable the labeler reads (as the
# code reads them) and the two the unit uses.
env_file=$root/etc/default/cilium-nomad-labeler
grep -Ev '^[[:space:]]*(#|$)' "$env_file" && fail "the environment file sets the lines above"
vars=$( (grep -ho 'read("[A-Z_]*"' "$src/common/nomad/client/nomad_client_config.cpp" |
         sed 's/read("//; s/"//'
       grep -ho 'getenv("[A-Z_]*")' "$src/common/cilium/client/cilium_client_config.cpp" |
         sed 's/getenv("//; s/")//'
       echo CN_NODE_ID; echo CN_LABELER_ARGS) | sort -u)
[ "$(wc -l <<<"$vars")" -ge 12 ] || fail "found only these variables in the code: $vars"
for var in $vars; do
  grep -q "^#$var=" "$env_file" || fail "the environment file does not document $var"
done
for var in CN_NODE_ID CN_LABELER_ARGS; do
  grep -q "\${\?$var}\?" <(grep -v '^#' "$unit") || fail "the unit does not use $var"
done

echo "== installed binaries"
labeler=$root/usr/bin/cilium-nomad-labeler plugin=$root/opt/cni/bin/cilium-nomad-cni
for args in version --version; do
  out=$(env -i "$labeler" $args 2>&1) || fail "cilium-nomad-labeler $args exited $?"
  [ "$out" = "cilium-nomad-labeler v$version" ] || fail "cilium-nomad-labeler $args printed '$out'"
done
out=$(env -i "$plugin" --version 2>/dev/null) || fail "cilium-nomad-cni --version exited $?"
[ "$(head -1 <<<"$out")" = "cilium-nomad-cni v$version" ] || fail "cilium-nomad-cni --version printed '$out'"
# Nomad's fingerprint: no arguments, no CNI_COMMAND; Nomad records the first semver token of
# the combined output (client/fingerprint/plugins_cni.go), here "v$version".
out=$(env -i "$plugin" 2>&1 </dev/null) || fail "the fingerprint run exited $?"
first=$(grep -oE '(^|[[:space:]])v?[0-9]+\.[0-9]+\.[0-9]+' <<<"$out" | head -1 | tr -d '[:space:]')
[ "$first" = "v$version" ] || fail "the fingerprint run's first version is '$first': $out"
file -b "$plugin" | grep -q 'statically linked' || fail "the plugin is not static: $(file -b "$plugin")"
for page in cilium-nomad-labeler cilium-nomad-cni; do
  zcat "$root/usr/share/man/man1/$page.1.gz" | grep -q "^\.TH \"\?${page^^}\"\? \"\?1\"\?" ||
    fail "$page.1.gz has no .TH header for section 1"
done
zcat "$root/usr/share/man/man1/cilium-nomad-labeler.1.gz" | grep -q 'state\\-file' ||
  fail "the labeler's man page lacks the run options"

echo "== lintian"
# Errors and warnings fail; info tags are shown for the record. The overrides file says why
# each remaining tag is accepted.
if ! lintian --display-info --fail-on error,warning "$deb" > "$work/lintian.log" 2>&1; then
  cat "$work/lintian.log"
  fail "lintian"
else
  cat "$work/lintian.log"
fi

echo "== cmake --install with the tree's own prefix"
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
if [ "$prefix" = /usr ]; then
  echo "(the tree's prefix is /usr; checked above through cpack)"
else
  DESTDIR=$work/destdir cmake --install "$build" > "$work/install.log" 2>&1 ||
    { cat "$work/install.log"; fail "cmake --install"; }
  d=$work/destdir
  for f in "$prefix/bin/cilium-nomad-labeler" /opt/cni/bin/cilium-nomad-cni \
           "$prefix/lib/systemd/system/cilium-nomad-labeler.service" \
           "$prefix/lib/tmpfiles.d/cilium-nomad.conf" "$prefix/etc/default/cilium-nomad-labeler" \
           "$prefix/share/doc/cilium-nomad/README.md" "$prefix/share/man/man1/cilium-nomad-labeler.1.gz"; do
    [ -f "$d$f" ] || fail "cmake --install did not install $f"
  done
  u=$d$prefix/lib/systemd/system/cilium-nomad-labeler.service
  grep -q "^ExecStart=$prefix/bin/cilium-nomad-labeler run " "$u" || fail "installed unit's ExecStart is not under $prefix"
  grep -qx "EnvironmentFile=-$prefix/etc/default/cilium-nomad-labeler" "$u" || fail "installed unit's EnvironmentFile is not under $prefix"
  grep -q "file://$prefix/share/doc/cilium-nomad/README.md" "$u" || fail "installed unit's Documentation is not under $prefix"
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all package checks passed"
