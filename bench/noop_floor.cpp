// The floor for the plugin benchmark: exec, read stdin to EOF, exit 0. With --echo it also
// writes its input back to stdout: a pass-through plugin must at least print a result, and the
// runtime must read it.
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  const bool echo = argc > 1 && ::strcmp(argv[1], "--echo") == 0;
  char buf[65536];
  for (ssize_t n; (n = ::read(STDIN_FILENO, buf, sizeof buf)) > 0;) {
    if (echo && ::write(STDOUT_FILENO, buf, static_cast<size_t>(n)) != n) return 1;
  }
  return 0;
}
