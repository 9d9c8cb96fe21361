// The floors for the plugin benchmark, in one static binary with no C++ runtime work at start:
//   (no argument)   exec, read stdin to EOF, exit 0;
//   --echo          the same, and write the input back to stdout: a pass-through plugin must at
//                   least print a result, and the runtime must read it;
//   --durable FILE  the least a chained plugin that keeps a node-local record of its allocations
//                   can do: read stdin, take an exclusive flock on FILE.lock, read FILE, write
//                   the same bytes to a temp file beside it, fsync, rename it over FILE, fsync
//                   the directory, and echo stdin. The plugin's target (ADD p50 ≤ 1.25 × this
//                   floor's p50) is measured against this one. It keeps FILE unchanged, so every
//                   run meets the same file.
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

namespace {

char g_input[1 << 20];
char g_file[1 << 20];

bool write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

size_t read_all(int fd, char* buf, size_t cap) {
  size_t used = 0;
  for (ssize_t n; used < cap && (n = ::read(fd, buf + used, cap - used)) > 0;)
    used += static_cast<size_t>(n);
  return used;
}

// Joins without allocating: the floor must not bring malloc's first-use cost into the figure.
bool join(char* out, size_t cap, const char* a, const char* b) {
  size_t la = ::strlen(a), lb = ::strlen(b);
  if (la + lb + 1 > cap) return false;
  ::memcpy(out, a, la);
  ::memcpy(out + la, b, lb + 1);
  return true;
}

int durable(const char* file, size_t input_size) {
  char lock_path[4096], tmp_path[4096], dir[4096];
  if (!join(lock_path, sizeof lock_path, file, ".lock") ||
      !join(tmp_path, sizeof tmp_path, file, ".tmp.floor") || !join(dir, sizeof dir, file, ""))
    return 1;
  char* slash = ::strrchr(dir, '/');
  if (slash == nullptr) return 1;
  *slash = '\0';

  int lock = ::open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0 || ::flock(lock, LOCK_EX) != 0) return 1;
  size_t size = 0;
  if (int in = ::open(file, O_RDONLY | O_CLOEXEC); in >= 0) {
    size = read_all(in, g_file, sizeof g_file);
    ::close(in);
  }
  int out = ::open(tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (out < 0 || !write_all(out, g_file, size) || ::fsync(out) != 0) return 1;
  ::close(out);
  if (::rename(tmp_path, file) != 0) return 1;
  int dfd = ::open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0 || ::fsync(dfd) != 0) return 1;
  ::close(dfd);
  ::close(lock);
  return write_all(STDOUT_FILENO, g_input, input_size) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t input_size = read_all(STDIN_FILENO, g_input, sizeof g_input);
  if (argc > 2 && ::strcmp(argv[1], "--durable") == 0) return durable(argv[2], input_size);
  if (argc > 1 && ::strcmp(argv[1], "--echo") == 0)
    return write_all(STDOUT_FILENO, g_input, input_size) ? 0 : 1;
  return 0;
}
