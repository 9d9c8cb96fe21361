// The floor for the plugin benchmark: exec, read stdin to EOF, exit 0.
#include <unistd.h>

int main() {
  char buf[65536];
  while (::read(STDIN_FILENO, buf, sizeof buf) > 0) {
  }
  return 0;
}
