// Batches of template matching (issue 14), one process and (CUDA) one context:
//
//   ./main match SOURCE T1 T2 ...                    every template against one source
//   ./main match --template T --sources S1 DIR ...   one template against many sources
//
// Each item is computed by exactly the code of a single call (the library's Matcher; cli_match.hpp:
// item_output), so its answer is the single call's, bit for bit, on every version. What a
// batch saves: the source is read, made grey and (FFT) transformed once for every template
// (match::SourceCache through Params::source_cache: the CPU FFT keeps the source's spectrum,
// cuda-opt the grey source on the device, uploaded once, and its FFT transform; a version that keeps nothing computes
// each item as a single call); the template is read, made grey and
// prepared once per source size (a small cache of matchers keyed by the source's size, as a
// video reuses one matcher for its frames). Outputs are all-or-nothing: the first item that
// fails stops the batch with one error line naming its file, and nothing is printed or written.
// --mask: one mask for every item, so every template must have its size (checked, naming the
// template, before any matching).
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <list>
#include <string>
#include <utility>
#include <vector>

#include "common/npy.hpp"
#include "common/output.hpp"
#include "image_io.hpp"
#include "api/api.hpp"
#include "match/answer.hpp"
#include "match/cli_match.hpp"
#include "match/mask.hpp"

namespace parvis {

namespace {

using match_cli::Item;
using match_cli::Request;

// "scores.npy", item 2 of 3 -> "scores-2.npy"; a batch of one keeps the name.
std::string numbered(const std::string& path, size_t i, size_t n) {
  if (n == 1 || path == "-") return path;
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  const size_t at = dot != std::string::npos && (slash == std::string::npos || dot > slash) ? dot : path.size();
  return path.substr(0, at) + "-" + std::to_string(i + 1) + path.substr(at);
}

bool is_image_name(const std::string& name) {
  const std::string e = file_extension(name);
  for (const char* k : {"bmp", "pgm", "ppm", "pnm", "png", "jpg", "jpeg", "tga"})
    if (e == k) return true;
  return false;
}

// The sources named on the command line: files as given, a directory's image files in name
// order (others skipped with a note on stderr). Errors: a path that does not exist (exit 2),
// no source at all (exit 2).
Status expand_sources(const std::vector<std::string>& args, std::vector<std::string>* out) {
  for (const std::string& a : args) {
    struct stat st;
    if (a == "-") {  // stdin, as in a single call
      out->push_back(a);
      continue;
    }
    if (::stat(a.c_str(), &st) != 0) return Status::bad_input(a + ": no such file or directory");
    if (!S_ISDIR(st.st_mode)) {
      out->push_back(a);
      continue;
    }
    DIR* d = ::opendir(a.c_str());
    if (!d) return Status::bad_input(a + ": cannot open the directory");
    std::vector<std::string> names, skipped;
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      const std::string path = a + (a.back() == '/' ? "" : "/") + name;
      struct stat fs;
      const bool image = ::stat(path.c_str(), &fs) == 0 && S_ISREG(fs.st_mode) && is_image_name(name);
      (image ? names : skipped).push_back(path);
    }
    ::closedir(d);
    if (names.empty())
      return Status::bad_input(a + ": no image file in the directory (" + std::to_string(skipped.size()) +
                               " other entries)");
    std::sort(names.begin(), names.end());
    std::sort(skipped.begin(), skipped.end());
    for (const std::string& path : skipped)
      std::fprintf(stderr, "note: %s: not an image file (by its name), skipped\n", path.c_str());
    out->insert(out->end(), names.begin(), names.end());
  }
  if (out->empty()) return Status::bad_input("no source to match");
  return Status::Ok();
}

// An error about one file, naming it (image_read's messages already do).
Status about(const std::string& path, Status s) {
  if (!s.ok() && s.message.compare(0, path.size(), path) != 0) s.message = path + ": " + s.message;
  return s;
}

// The item's JSON object with the two file names appended.
std::string json_item(const std::string& object, const Item& item) {
  Json names;
  names.begin_object().key("source_file").str(item.source_path).key("template_file").str(item.template_path).end_object();
  return object.substr(0, object.size() - 1) + ", " + names.text().substr(1);
}

// The matchers of one template, one per source size (LRU, at most kPlans): the template is
// prepared once per size and each matcher keeps its FFT plans and spectra between sources.
class MatcherCache {
 public:
  static constexpr size_t kPlans = 4;
  Status get(const Image& gray_tpl, const MatchOptions& options, int w, int h, Matcher** out, int* runs) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->w == w && it->h == h) {
        entries_.splice(entries_.begin(), entries_, it);
        *out = &entries_.front().m;
        *runs = ++entries_.front().runs;
        return Status::Ok();
      }
    Entry e{w, h, 1, Matcher()};
    PARVIS_TRY(e.m.prepare(api::view_of(gray_tpl), options));
    entries_.push_front(std::move(e));
    if (entries_.size() > kPlans) entries_.pop_back();
    *out = &entries_.front().m;
    *runs = 1;
    return Status::Ok();
  }

 private:
  struct Entry {
    int w, h, runs;
    Matcher m;
  };
  std::list<Entry> entries_;
};

// Every output of a batch of n items declared before any matching: the maps NAME-I.npy and
// the pictures (one for a batch of templates, NAME-I.EXT with --sources).
Status declare_outputs(const Request& req, size_t n, bool sources_mode, Outputs* outputs) {
  for (size_t i = 0; i < n && !req.map_path.empty(); ++i) PARVIS_TRY(outputs->declare(numbered(req.map_path, i, n)));
  if (req.out_path.empty()) return Status::Ok();
  if (!sources_mode) return image_declare(outputs, req.out_path, 3);  // annotations are colour
  for (size_t i = 0; i < n; ++i) PARVIS_TRY(image_declare(outputs, numbered(req.out_path, i, n), 3));
  return Status::Ok();
}

// The item's map as NAME-I.npy when --map asks for it; the map itself is released.
Status map_file(const Request& req, Item* item, size_t i, size_t n, Outputs* outputs) {
  const Status s = req.map_path.empty() ? Status::Ok() : match_cli::put_map(numbered(req.map_path, i, n), *item, outputs);
  std::vector<double>().swap(item->result.map);  // printing needs only its size: a batch keeps none
  return s;
}

}  // namespace

int match_batch(const Request& req, const std::vector<std::string>& positional, bool sources_mode,
                const std::string& template_path) {
  const double t0 = now_ms();
  std::vector<Item> items;
  Outputs outputs;  // committed after the results are printed
  Status s;
  if (!sources_mode) {
    // Every template against one source: every file read and checked before any matching.
    const std::string& source_path = positional[0];
    s = declare_outputs(req, positional.size() - 1, false, &outputs);
    if (!s.ok()) return report_failure(s);
    Image source;
    s = image_read(source_path, &source);
    if (!s.ok()) return report_failure(s);
    match::Source src(source);  // its grey made once, where a run needs it on the host
    const size_t n = positional.size() - 1;
    std::vector<Image> gray_tpls(n);  // made grey once: the checks and the matcher read them
    for (size_t i = 0; i < n && s.ok(); ++i) {
      Image tpl;
      s = image_read(positional[i + 1], &tpl);
      if (s.ok()) gray_tpls[i] = to_gray(tpl);
      const Image& gray_tpl = gray_tpls[i];
      if (s.ok()) s = about(positional[i + 1], match::check_template(gray_tpl));
      if (s.ok()) s = about(positional[i + 1], match::check_source(src.shape(), gray_tpl.width, gray_tpl.height));
      // --mask: the one mask of the batch must have every template's size.
      if (s.ok()) s = about(positional[i + 1], match::mask::check(req.params, gray_tpl.width, gray_tpl.height));
    }
    if (!s.ok()) return report_failure(s);
    // What a version keeps of the source for the next templates (match::SourceCache): the CPU
    // FFT its transform (reused by every later template of the same padded size), cuda-opt the
    // grey source on the device (uploaded once, copied on the device for each template) and
    // its FFT pipelines' transform of it (per kind and padded size). Each item is the library's
    // Matcher, prepared to share it and run on the one source (MatcherAccess, src/api/api.hpp).
    match::SourceCache cache;
    const MatchOptions options = match_cli::options_of(req);
    items.resize(n);
    std::vector<std::vector<Rect>> groups(n);
    std::vector<Rgb> colors(n);
    for (size_t i = 0; i < n && s.ok(); ++i) {
      Item& item = items[i];
      item.source_path = source_path;
      item.template_path = positional[i + 1];
      item.source_width = source.width;
      item.source_height = source.height;
      item.template_width = gray_tpls[i].width;
      item.template_height = gray_tpls[i].height;
      Matcher matcher;
      s = MatcherAccess::prepare(&matcher, api::view_of(gray_tpls[i]), options, &cache);
      const double t_item = now_ms();  // the item's time: its run
      if (s.ok()) {
        const match::SourceCache::Tally before[2] = {cache.upload, cache.transform};
        s = about(item.template_path, MatcherAccess::run(&matcher, src, &item.result));
        for (int k = 0; k < 2 && s.ok(); ++k) {
          const match::SourceCache::Tally& now = k == 0 ? cache.upload : cache.transform;
          if (now.made > before[k].made) item.result.explain += std::string("; batch: ") + now.what + " made (kept for the next templates)";
          else if (now.reused > before[k].reused) item.result.explain += std::string("; batch: ") + now.what + " reused";
        }
      }
      item.total_ms = now_ms() - t_item;
      if (s.ok()) s = map_file(req, &item, i, n, &outputs);
      groups[i] = match_cli::outlined(req, item);
      colors[i] = match_cli::item_color(i);
    }
    if (s.ok() && !req.out_path.empty())
      s = image_put(&outputs, req.out_path, match_cli::annotate(source, groups, colors));
  } else {
    // One template against every source, a source read when its turn comes.
    Image tpl;
    s = image_read(template_path, &tpl);
    const Image gray_tpl = s.ok() ? to_gray(tpl) : Image();
    if (s.ok()) s = about(template_path, match::check_template(gray_tpl));
    if (s.ok()) s = about(template_path, match::mask::check(req.params, gray_tpl.width, gray_tpl.height));
    std::vector<std::string> sources;
    if (s.ok()) s = expand_sources(positional, &sources);
    if (s.ok()) s = declare_outputs(req, sources.size(), true, &outputs);
    if (!s.ok()) return report_failure(s);
    const size_t n = sources.size();
    const MatchOptions options = match_cli::options_of(req);
    MatcherCache matchers;
    items.resize(n);
    for (size_t i = 0; i < n && s.ok(); ++i) {
      Item& item = items[i];
      item.source_path = sources[i];
      item.template_path = template_path;
      item.template_width = tpl.width;
      item.template_height = tpl.height;
      Image source;
      s = image_read(sources[i], &source);
      if (!s.ok()) break;
      item.source_width = source.width;
      item.source_height = source.height;
      s = about(sources[i], match::check_source(match::Source(source).shape(), gray_tpl.width, gray_tpl.height));
      Matcher* matcher = nullptr;
      int runs = 0;
      if (s.ok()) s = matchers.get(gray_tpl, options, source.width, source.height, &matcher, &runs);
      const double t_item = now_ms();  // the item's time: its run
      if (s.ok()) s = about(sources[i], matcher->run(api::view_of(source), &item.result));
      if (s.ok())
        item.result.explain += "; batch: the template prepared for " + std::to_string(source.width) + "x" +
                               std::to_string(source.height) + " sources, run " + std::to_string(runs) +
                               " at this size";
      item.total_ms = now_ms() - t_item;
      if (s.ok()) s = map_file(req, &item, i, n, &outputs);
      if (s.ok() && !req.out_path.empty())
        s = image_put(&outputs, numbered(req.out_path, i, n),
                      match_cli::annotate(source, {match_cli::outlined(req, item)}, {match_cli::item_color(0)}));
    }
  }
  if (!s.ok()) return report_failure(s);

  const size_t n = items.size();
  if (req.json) {
    Json head;
    head.begin_object().key("operation").str("match").key("batch").str(sources_mode ? "sources" : "templates")
        .key("count").num(uint64_t(n));
    std::string text = head.text() + ", \"items\": [";
    for (size_t i = 0; i < n; ++i)
      text += (i ? ", " : "") + json_item(match_cli::item_output(req, items[i]), items[i]);
    std::printf("%s]}\n", text.c_str());
  } else {
    for (size_t i = 0; i < n; ++i)
      std::printf("item %zu/%zu: source %s template %s\n%s", i + 1, n, items[i].source_path.c_str(),
                  items[i].template_path.c_str(), match_cli::item_output(req, items[i]).c_str());
  }
  s = outputs.commit();
  if (!s.ok()) return report_failure(s);
  for (const Item& item : items) match_cli::print_item_timings(req, item);
  std::fprintf(stderr, "time match batch: total %.3f ms (%zu items)\n", now_ms() - t0, n);
  return kExitOk;
}

}  // namespace parvis
