#include "common/output.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace parvis {

Status write_file_atomic(const std::string& path, const void* data, size_t n) {
  if (path == "-") {
    if (std::fwrite(data, 1, n, stdout) != n || std::fflush(stdout) != 0)
      return Status::runtime("cannot write to stdout");
    return Status::Ok();
  }
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string tmpl = (slash == std::string::npos ? std::string() : dir) + "." + base + ".XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  const int fd = mkstemp(name.data());
  if (fd < 0) return Status::bad_input("cannot write " + path + ": " + std::strerror(errno));
  const uint8_t* p = static_cast<const uint8_t*>(data);
  size_t left = n;
  while (left > 0) {
    const ssize_t w = ::write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(name.data());
      return Status::runtime("cannot write " + path + ": " + why);
    }
    p += w;
    left -= size_t(w);
  }
  // mkstemp creates 0600; give the file the usual permissions.
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  if (::close(fd) != 0 || std::rename(name.data(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(name.data());
    return Status::runtime("cannot write " + path + ": " + why);
  }
  return Status::Ok();
}

Status read_file(const std::string& path, std::vector<uint8_t>* out, size_t max_bytes) {
  FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) return Status::bad_input("cannot open " + path + ": " + std::strerror(errno));
  out->clear();
  uint8_t buf[1 << 16];
  size_t got;
  while (out->size() <= max_bytes && (got = std::fread(buf, 1, sizeof buf, f)) > 0)
    out->insert(out->end(), buf, buf + got);
  const bool err = std::ferror(f) != 0;
  if (f != stdin) std::fclose(f);
  if (err) return Status::bad_input("cannot read " + path);
  if (out->size() > max_bytes)
    return Status::bad_input(path + " is larger than " + std::to_string(max_bytes) + " bytes");
  return Status::Ok();
}

std::string file_extension(const std::string& path) {
  const size_t dot = path.find_last_of('.');
  const size_t slash = path.find_last_of('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot + 1);
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

}  // namespace parvis
