#include "cli/cli.hpp"

#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "common/image.hpp"

namespace parvis {

void ArgParser::flag(const std::string& name, bool* out, const std::string& help) {
  opts_.push_back({name, "", help, false, [out](const std::string&) {
                     *out = true;
                     return Status::Ok();
                   }});
}

void ArgParser::option(const std::string& name, std::string* out, const std::string& meta,
                       const std::string& help) {
  opts_.push_back({name, meta, help, true, [out](const std::string& v) {
                     *out = v;
                     return Status::Ok();
                   }});
}

void ArgParser::option(const std::string& name, int* out, const std::string& meta,
                       const std::string& help) {
  opts_.push_back({name, meta, help, true, [out, name](const std::string& v) {
                     int64_t x;
                     Status s = parse_int(v, INT32_MIN, INT32_MAX, &x);
                     if (!s.ok()) return Status::usage(name + ": " + s.message);
                     *out = int(x);
                     return Status::Ok();
                   }});
}

void ArgParser::option(const std::string& name, double* out, const std::string& meta,
                       const std::string& help) {
  opts_.push_back({name, meta, help, true, [out, name](const std::string& v) {
                     char* end = nullptr;
                     const double x = std::strtod(v.c_str(), &end);
                     if (v.empty() || *end != '\0' || !std::isfinite(x))
                       return Status::usage(name + ": '" + v + "' is not a number");
                     *out = x;
                     return Status::Ok();
                   }});
}

void ArgParser::max_pixels_option() {
  const std::string name = "--max-pixels";
  opts_.push_back({name, "N",
                   "refuse an input image or video frame of more than N pixels (exit 2); default\n"
                   "                          and at most 2147483648 (2^31, as the 2^31-byte image limit)",
                   true, [name](const std::string& v) {
                     int64_t x;
                     Status s = parse_int(v, 1, int64_t(kMaxImageBytes), &x);
                     if (!s.ok()) return Status::usage(name + ": " + s.message);
                     set_max_input_pixels(uint64_t(x));
                     return Status::Ok();
                   }});
}

void ArgParser::repeated(const std::string& name, std::vector<std::string>* out,
                         const std::string& meta, const std::string& help) {
  opts_.push_back({name, meta, help, true, [out](const std::string& v) {
                     out->push_back(v);
                     return Status::Ok();
                   }});
}

Status ArgParser::parse(int argc, char** argv, int first, std::vector<std::string>* positional) {
  bool only_positional = false;
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (only_positional || a.size() < 2 || a[0] != '-' || (a[1] >= '0' && a[1] <= '9')) {
      positional->push_back(a);
      continue;
    }
    if (a == "--") {
      only_positional = true;
      continue;
    }
    if (a == "-h" || a == "--help") {
      help_ = true;
      continue;
    }
    std::string value;
    bool has_value = false;
    const size_t eq = a.find('=');
    if (eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
      has_value = true;
    }
    const Opt* o = nullptr;
    for (const Opt& c : opts_)
      if (c.name == a) o = &c;
    if (!o) return Status::usage("unknown option " + a + " (see --help)");
    if (o->takes_value && !has_value) {
      if (i + 1 >= argc) return Status::usage(a + " needs a value (" + o->meta + ")");
      value = argv[++i];
    } else if (!o->takes_value && has_value) {
      return Status::usage(a + " takes no value");
    }
    PARVIS_TRY(o->set(value));
  }
  return Status::Ok();
}

int ArgParser::parse_command(int argc, char** argv, std::vector<std::string>* positional) {
  const Status s = parse(argc, argv, 1, positional);
  if (help_) {
    std::printf("%s", help_text().c_str());
    return kExitOk;
  }
  if (!s.ok()) return report_failure(s);
  return -1;
}

std::string ArgParser::help_text() const {
  std::string t = usage_ + "\n";
  if (!opts_.empty()) t += "\noptions:\n";
  for (const Opt& o : opts_) {
    std::string lhs = "  " + o.name + (o.takes_value ? " " + o.meta : "");
    if (lhs.size() < 26) lhs.append(26 - lhs.size(), ' ');
    else lhs += "\n" + std::string(26, ' ');
    t += lhs + o.help + "\n";
  }
  t += "  -h, --help              this help\n";
  return t;
}

int report_failure(const Status& s) {
  std::fprintf(stderr, "parvis %s: %s\n", kVersionName, s.message.c_str());
  return s.code == kExitOk ? kExitRuntime : s.code;
}

void print_timings(const char* what, double total_ms, const Timings& t) {
  std::fprintf(stderr, "time %s: total %.3f ms", what, total_ms);
  if (t.upload_ms >= 0 || t.download_ms >= 0)
    std::fprintf(stderr, " (upload %.3f, compute %.3f, download %.3f ms)", t.upload_ms,
                 t.compute_ms, t.download_ms);
  else
    std::fprintf(stderr, " (compute %.3f ms)", t.compute_ms);
  if (t.upload_bytes > 0 && t.upload_ms > 0)
    std::fprintf(stderr, " [upload %.0f us, %.2f MB at %.1f GB/s, %s]", t.upload_ms * 1000.0,
                 t.upload_bytes / 1e6, t.upload_bytes / (t.upload_ms * 1e6), t.upload_how.c_str());
  else if (!t.upload_how.empty() && t.upload_ms >= 0)
    std::fprintf(stderr, " [upload %.0f us, %s]", t.upload_ms * 1000.0, t.upload_how.c_str());
  if (t.gray_host_ms >= 0) std::fprintf(stderr, " [grey made on the host %.0f us]", t.gray_host_ms * 1000.0);
  std::fprintf(stderr, "\n");
}

void Json::sep() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.back()) out_ += ", ";
  first_.back() = false;
}

Json& Json::key(const std::string& k) {
  sep();
  quote(k);
  out_ += ": ";
  after_key_ = true;
  return *this;
}

Json& Json::str(const std::string& v) {
  sep();
  quote(v);
  return *this;
}

void Json::quote(const std::string& v) {
  out_ += '"';
  for (char c : v) {
    switch (c) {
      case '"': out_ += "\\\""; break;
      case '\\': out_ += "\\\\"; break;
      case '\n': out_ += "\\n"; break;
      case '\t': out_ += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          out_ += b;
        } else {
          out_ += c;
        }
    }
  }
  out_ += '"';
}

Json& Json::num(double v) {
  sep();
  char b[64];
  if (!std::isfinite(v)) {
    std::snprintf(b, sizeof b, "null");
  } else {
    // The shortest of %.15g..%.17g that reads back as the same double (0.2, not 0.2000...01).
    for (int digits = 15; digits <= 17; ++digits) {
      std::snprintf(b, sizeof b, "%.*g", digits, v);
      if (std::strtod(b, nullptr) == v) break;
    }
  }
  out_ += b;
  return *this;
}

Json& Json::num(int64_t v) {
  sep();
  out_ += std::to_string(v);
  return *this;
}

Json& Json::num(uint64_t v) {
  sep();
  out_ += std::to_string(v);
  return *this;
}

Json& Json::boolean(bool v) {
  sep();
  out_ += v ? "true" : "false";
  return *this;
}

Json& Json::begin_object() {
  sep();
  out_ += "{";
  first_.push_back(true);
  return *this;
}

Json& Json::end_object() {
  first_.pop_back();
  out_ += "}";
  return *this;
}

Json& Json::begin_array() {
  sep();
  out_ += "[";
  first_.push_back(true);
  return *this;
}

Json& Json::end_array() {
  first_.pop_back();
  out_ += "]";
  return *this;
}

}  // namespace parvis
