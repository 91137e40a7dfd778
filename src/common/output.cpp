#include "common/output.hpp"

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.hpp"
#include "common/splitmix.hpp"

namespace parvis {

namespace {

// Unnamed temporaries (O_TMPFILE) keep a descriptor open until commit; past this many, a
// finished one is named at once, so that a run with thousands of outputs stays within the
// descriptor limit.
constexpr size_t kOpenTemps = 32;

std::string why() { return std::strerror(errno); }

std::string dir_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The final target of a chain of symlinks at `path` (the last component only).
Status follow_links(const std::string& path, std::string* target) {
  std::string p = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) {
      *target = p;
      return Status::Ok();
    }
    char buf[PATH_MAX];
    const ssize_t n = ::readlink(p.c_str(), buf, sizeof buf - 1);
    if (n <= 0) return Status::bad_input("cannot write " + path + ": " + why());
    std::string next(buf, size_t(n));
    if (next[0] != '/' && p.find('/') != std::string::npos) next = dir_of(p) + "/" + next;
    p = next;
  }
  return Status::bad_input("cannot write " + path + ": too many levels of symbolic links");
}

// ".pv" and six random characters: short, so that any legal name has room beside it.
std::string temp_name(const std::string& dir, const std::string& extension) {
  static SplitMix64 gen{uint64_t(::getpid()) * kSplitmixGamma ^
                        uint64_t(std::chrono::steady_clock::now().time_since_epoch().count())};
  static const char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  uint64_t r = gen.next();
  std::string name = dir + "/.pv";
  for (int i = 0; i < 6; ++i, r /= 62) name += kChars[r % 62];
  return extension.empty() ? name : name + "." + extension;
}

}  // namespace

struct Outputs::Item {
  std::string path;    // as given
  std::string target;  // after symlinks
  enum class Where { Stdout, File, InPlace } where = Where::File;
  bool existed = false;
  struct stat st {};
  int fd = -1;        // the temporary (unnamed while temp is empty), or the device itself
  std::string temp;   // the temporary's name, once it has one
  int slot = -1;      // its entry in the signal handler's table
  bool written = false, by_child = false;
  std::vector<uint8_t> bytes;  // in place: the content, written at commit
};

Outputs::Outputs(bool check_stdout) : check_stdout_(check_stdout) {}

Outputs::~Outputs() {
  for (auto& it : items_) {
    if (it->fd >= 0) ::close(it->fd);
    if (!committed_ && !it->temp.empty()) ::unlink(it->temp.c_str());
    cleanup_forget_file(it->slot);
  }
  if (!committed_)
    for (auto d = made_dirs_.rbegin(); d != made_dirs_.rend(); ++d) ::rmdir(d->c_str());  // only if empty
}

Outputs::Item* Outputs::find(const std::string& path) {
  for (auto& it : items_)
    if (it->path == path) return it.get();
  return nullptr;
}

Status Outputs::make_dir(const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return Status::bad_input("cannot write into " + dir + ": not a directory");
    return Status::Ok();
  }
  if (::mkdir(dir.c_str(), 0777) != 0) return Status::bad_input("cannot create " + dir + ": " + why());
  made_dirs_.push_back(dir);
  return Status::Ok();
}

Status Outputs::declare(const std::string& path) {
  if (path.empty()) return Status::usage("an output file name is empty");
  if (find(path)) return Status::usage(path + " is named as two outputs");
  auto it = std::make_unique<Item>();
  it->path = path;
  if (path == "-") {
    it->where = Item::Where::Stdout;
    items_.push_back(std::move(it));
    return Status::Ok();
  }
  PARVIS_TRY(follow_links(path, &it->target));
  const std::string& t = it->target;
  const std::string fail = "cannot write " + path + (t == path ? "" : " (a link to " + t + ")") + ": ";
  if (::stat(t.c_str(), &it->st) == 0) {
    it->existed = true;
    const mode_t m = it->st.st_mode;
    if (S_ISDIR(m)) return Status::bad_input(fail + "it is a directory");
    if (S_ISSOCK(m)) return Status::bad_input(fail + "it is a socket");
    if (S_ISCHR(m) || S_ISBLK(m) || S_ISFIFO(m)) {
      if (::access(t.c_str(), W_OK) != 0) return Status::bad_input(fail + why());
      it->where = Item::Where::InPlace;
      items_.push_back(std::move(it));
      return Status::Ok();
    }
  } else if (errno != ENOENT) {
    return Status::bad_input(fail + why());
  }
  const std::string dir = dir_of(t);
  struct stat ds;
  if (::stat(dir.c_str(), &ds) != 0) return Status::bad_input(fail + "no directory " + dir);
  if (!S_ISDIR(ds.st_mode)) return Status::bad_input(fail + dir + " is not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return Status::bad_input(fail + "directory " + dir + ": " + why());
  items_.push_back(std::move(it));
  return Status::Ok();
}

// An unnamed temporary in the target's directory where the file system has O_TMPFILE (and
// /proc to name it at commit), else a named one registered with the signal handler.
Status Outputs::create_temp(Item* it) {
  const std::string dir = dir_of(it->target);
#ifdef O_TMPFILE
  static const bool have_proc = ::access("/proc/self/fd", X_OK) == 0;
  if (have_proc) {
    it->fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);  // 0666 & ~umask
    if (it->fd >= 0) return Status::Ok();
  }
#endif
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string name = temp_name(dir, "");
    it->fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (it->fd >= 0) {
      it->temp = name;
      it->slot = cleanup_track_file(name);
      return Status::Ok();
    }
    if (errno != EEXIST) break;
  }
  return Status::runtime("cannot write " + it->path + ": cannot create a temporary file in " + dir + ": " + why());
}

// Gives an unnamed temporary its name (linkat through /proc), registered with the handler.
Status Outputs::name_temp(Item* it, const std::string& extension) {
  if (!it->temp.empty()) return Status::Ok();
  const std::string dir = dir_of(it->target);
  const std::string proc = "/proc/self/fd/" + std::to_string(it->fd);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string name = temp_name(dir, extension);
    if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) {
      it->temp = name;
      it->slot = cleanup_track_file(name);
      return Status::Ok();
    }
    if (errno != EEXIST) break;
  }
  return Status::runtime("cannot write " + it->path + ": " + why());
}

Status Outputs::put(const std::string& path, const void* data, size_t n) {
  Item* it = find(path);
  if (!it || it->written) return Status::runtime("internal: output " + path + " not declared, or written twice");
  it->written = true;
  switch (it->where) {
    case Item::Where::Stdout:
      if (std::fwrite(data, 1, n, stdout) != n) return Status::runtime("cannot write to stdout: " + why());
      return Status::Ok();
    case Item::Where::InPlace:
      it->bytes.assign(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + n);
      return Status::Ok();
    case Item::Where::File:
      break;
  }
  PARVIS_TRY(create_temp(it));
  PARVIS_TRY(write_fd(it->fd, data, n, path));
  size_t unnamed = 0;
  for (auto& other : items_) unnamed += other->fd >= 0 && other->temp.empty();
  if (unnamed > kOpenTemps) {
    PARVIS_TRY(name_temp(it, ""));
    const int rc = ::close(it->fd);
    it->fd = -1;
    if (rc != 0) return Status::runtime("cannot write " + path + ": " + why());
  }
  return Status::Ok();
}

Status Outputs::stream(const std::string& path, int* fd) {
  Item* it = find(path);
  if (!it || it->written || it->where == Item::Where::Stdout)
    return Status::runtime("internal: output " + path + " not declared as a file, or written twice");
  it->written = true;
  if (it->where == Item::Where::InPlace) {
    it->fd = ::open(it->target.c_str(), O_WRONLY | O_CLOEXEC);
    if (it->fd < 0) return Status::bad_input("cannot write " + path + ": " + why());
  } else {
    PARVIS_TRY(create_temp(it));
  }
  *fd = it->fd;
  return Status::Ok();
}

Status Outputs::child_path(const std::string& path, std::string* name) {
  Item* it = find(path);
  if (!it || it->written || it->where == Item::Where::Stdout)
    return Status::runtime("internal: output " + path + " not declared as a file, or written twice");
  it->written = true;
  it->by_child = true;
  if (it->where == Item::Where::InPlace) {  // the device itself
    *name = it->target;
    return Status::Ok();
  }
  const std::string dir = dir_of(it->target);
  const size_t dot = it->target.find_last_of('.');
  const std::string ext = dot == std::string::npos || it->target.find('/', dot) != std::string::npos
                              ? "" : it->target.substr(dot + 1);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string t = temp_name(dir, ext);
    const int fd = ::open(t.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::close(fd);
      it->temp = t;
      it->slot = cleanup_track_file(t);
      *name = t;
      return Status::Ok();
    }
    if (errno != EEXIST) break;
  }
  return Status::runtime("cannot write " + path + ": cannot create a temporary file in " + dir + ": " + why());
}

Status Outputs::commit() {
  errno = 0;
  if (check_stdout_ && (std::fflush(stdout) != 0 || std::ferror(stdout)))
    return Status::runtime(std::string("cannot write to stdout") + (errno ? ": " + why() : ""));
  // Everything that can fail first: each file complete, with the old file's mode and owner,
  // and named; then the devices are written; then the renames, which replace the files.
  for (auto& it : items_) {
    if (it->where == Item::Where::Stdout) continue;
    if (!it->written) return Status::runtime("internal: output " + it->path + " was never written");
    if (it->where == Item::Where::InPlace) continue;
    if (it->fd < 0 && it->by_child) {
      if (it->existed) {
        (void)::chown(it->temp.c_str(), it->st.st_uid, it->st.st_gid);  // where allowed
        if (::chmod(it->temp.c_str(), it->st.st_mode & 07777) != 0)
          return Status::runtime("cannot write " + it->path + ": " + why());
      }
      continue;
    }
    if (it->fd >= 0 && it->existed) {
      (void)::fchown(it->fd, it->st.st_uid, it->st.st_gid);  // where allowed (EPERM otherwise)
      if (::fchmod(it->fd, it->st.st_mode & 07777) != 0)
        return Status::runtime("cannot write " + it->path + ": " + why());
    } else if (it->existed) {  // named early and closed
      (void)::chown(it->temp.c_str(), it->st.st_uid, it->st.st_gid);
      if (::chmod(it->temp.c_str(), it->st.st_mode & 07777) != 0)
        return Status::runtime("cannot write " + it->path + ": " + why());
    }
    if (it->fd >= 0) {
      PARVIS_TRY(name_temp(it.get(), ""));
      const int rc = ::close(it->fd);
      it->fd = -1;
      if (rc != 0) return Status::runtime("cannot write " + it->path + ": " + why());
    }
  }
  for (auto& it : items_) {
    if (it->where != Item::Where::InPlace) continue;
    if (it->fd >= 0) {  // streamed
      const int rc = ::close(it->fd);
      it->fd = -1;
      if (rc != 0) return Status::runtime("cannot write " + it->path + ": " + why());
    } else if (!it->by_child) {
      const int fd = ::open(it->target.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) return Status::runtime("cannot write " + it->path + ": " + why());
      Status s = write_fd(fd, it->bytes.data(), it->bytes.size(), it->path);
      if (::close(fd) != 0 && s.ok()) s = Status::runtime("cannot write " + it->path + ": " + why());
      PARVIS_TRY(s);
    }
  }
  for (auto& it : items_) {
    if (it->where != Item::Where::File) continue;
    if (std::rename(it->temp.c_str(), it->target.c_str()) != 0)
      return Status::runtime("cannot write " + it->path + ": " + why());
    it->temp.clear();
    cleanup_forget_file(it->slot);
    it->slot = -1;
  }
  committed_ = true;
  return Status::Ok();
}

Status write_fd(int fd, const void* data, size_t n, const std::string& path) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return Status::runtime("cannot write " + path + ": " + why());
    }
    p += w;
    n -= size_t(w);
  }
  return Status::Ok();
}

Status write_file_atomic(const std::string& path, const void* data, size_t n) {
  Outputs out(false);
  PARVIS_TRY(out.declare(path));
  PARVIS_TRY(out.put(path, data, n));
  if (path == "-" && std::fflush(stdout) != 0) return Status::runtime("cannot write to stdout: " + why());
  return out.commit();
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
