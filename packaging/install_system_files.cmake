# Runs at install time (install(SCRIPT) in packaging/CMakeLists.txt), where
# CMAKE_INSTALL_PREFIX is the prefix of this install: `cmake --install --prefix`, cpack's /usr,
# or the tree's own. The unit names the labeler, its environment file and the README by
# absolute path, so it is rewritten here for the prefix actually used; the checked-in unit
# carries the package's paths.
#
# Inputs (set by install(CODE) just before): CN_UNIT_SOURCE, CN_TMPFILES_SOURCE,
# CN_DEFAULT_SOURCE, CN_STAGING_DIR, CN_BINDIR, CN_DOCDIR.

set(prefix "${CMAKE_INSTALL_PREFIX}")
if(prefix STREQUAL "/usr")
  # Where Debian 12's own packages put them (debhelper: dh_installsystemd, dh_installtmpfiles).
  set(unit_dir "/lib/systemd/system")
  set(tmpfiles_dir "/usr/lib/tmpfiles.d")
  set(default_dir "/etc/default")
else()
  # All under the prefix; systemd reads /usr/local/lib/systemd/system and
  # /usr/local/lib/tmpfiles.d too.
  set(unit_dir "${prefix}/lib/systemd/system")
  set(tmpfiles_dir "${prefix}/lib/tmpfiles.d")
  set(default_dir "${prefix}/etc/default")
endif()

foreach(var CN_BINDIR CN_DOCDIR)
  if(NOT IS_ABSOLUTE "${${var}}")
    set(${var} "${prefix}/${${var}}")
  endif()
endforeach()

file(READ "${CN_UNIT_SOURCE}" unit)
string(REPLACE "/usr/bin/cilium-nomad-labeler" "${CN_BINDIR}/cilium-nomad-labeler" unit "${unit}")
string(REPLACE "/usr/share/doc/cilium-nomad" "${CN_DOCDIR}" unit "${unit}")
string(REPLACE "/etc/default/cilium-nomad-labeler" "${default_dir}/cilium-nomad-labeler" unit
               "${unit}")
file(MAKE_DIRECTORY "${CN_STAGING_DIR}")
file(WRITE "${CN_STAGING_DIR}/cilium-nomad-labeler.service" "${unit}")

file(INSTALL "${CN_STAGING_DIR}/cilium-nomad-labeler.service" DESTINATION "${unit_dir}"
     PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
file(INSTALL "${CN_TMPFILES_SOURCE}" DESTINATION "${tmpfiles_dir}" RENAME cilium-nomad.conf
     PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
# Mode 0600: an operator puts NOMAD_TOKEN in it.
file(INSTALL "${CN_DEFAULT_SOURCE}" DESTINATION "${default_dir}" RENAME cilium-nomad-labeler
     PERMISSIONS OWNER_READ OWNER_WRITE)
