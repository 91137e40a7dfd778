// ./main filter IN OUT --kernel NAME [--size 3|5] | --kernel-file F  [--border B] [--gray] [--json]
//                [--explain]
#include <cstdio>

#include "api/api.hpp"
#include "cli/cli.hpp"
#include "common/output.hpp"
#include "cli/subcommands.hpp"
#include "filter/filter.hpp"
#include "image_io.hpp"

namespace parvis {

int cli_filter(int argc, char** argv) {
  std::string kernel_name, kernel_file, border_text = "zero";
  int size = 3;
  bool gray = false, json = false, explain = false;
  ArgParser args(
      "usage: ./main filter IN OUT --kernel NAME [--size 3|5] [--border zero|replicate|reflect101]\n"
      "       ./main filter IN OUT --kernel-file F [--border ...]\n"
      "Convolves IN (grey, or RGB per channel) with an integer kernel and writes OUT:\n"
      "out = clamp(round_half_up(sum(tap * px) / divisor), 0, 255), exact.");
  args.option("--kernel", &kernel_name, "NAME", "identity, sharpen, edge, gaussian, box, unsharp");
  args.option("--size", &size, "3|5", "kernel size (default 3)");
  args.option("--kernel-file", &kernel_file, "F",
              "custom kernel: rows of integers (square, odd side), then a line with the divisor");
  args.option("--border", &border_text, "B",
              "zero (outside pixels count as 0, the default), replicate, reflect101");
  args.flag("--gray", &gray, "convert the input to grey first");
  args.flag("--json", &json, "print the result as JSON");
  args.flag("--explain", &explain, "also print the tuning and the path that ran (differ between versions)");
  args.max_pixels_option();
  std::vector<std::string> pos;
  if (int rc = args.parse_command(argc, argv, &pos); rc >= 0) return rc;
  Status s;
  if (pos.size() != 2) return report_failure(Status::usage("filter needs IN and OUT (see --help)"));
  if (kernel_name.empty() == kernel_file.empty())
    return report_failure(Status::usage("filter needs exactly one of --kernel and --kernel-file"));

  Outputs outputs;  // checked before any work, committed last
  s = image_declare(&outputs, pos[1]);
  if (!s.ok()) return report_failure(s);
  filter::Border border;
  s = filter::parse_border(border_text, &border);
  if (!s.ok()) return report_failure(s);
  filter::Kernel kernel;  // parsed here for the usage errors before any work, and the report
  std::string kernel_text;
  if (!kernel_file.empty()) {
    std::vector<uint8_t> text;
    s = read_file(kernel_file, &text, size_t(1) << 20);  // a 15x15 kernel is a few KiB
    if (s.ok()) kernel_text.assign(text.begin(), text.end());
    if (s.ok()) s = filter::parse_kernel_text(kernel_text, &kernel);
    if (!s.ok()) return report_failure(Status::bad_input("kernel file " + kernel_file + ": " + s.message));
  } else {
    s = filter::builtin_kernel(kernel_name, size, &kernel);
    if (!s.ok()) return report_failure(s);
  }

  Image in;
  s = image_read(pos[0], &in);
  if (!s.ok()) return report_failure(s);
  if (gray) in = to_gray(in);
  s = image_check_channels(pos[1], in.channels);  // before the work, now that they are known
  if (!s.ok()) return report_failure(s);

  // The library's filter (include/parvis/parvis.hpp), as a program on the library would call it.
  FilterOptions options;
  options.kernel = kernel_name;
  options.size = size;
  options.kernel_text = kernel_text;
  options.border = border_text;
  Filter f;
  ImageBuffer out;
  const double t0 = now_ms();
  s = f.prepare(options, in.width, in.height, in.channels == 1 ? PixelOrder::Gray : PixelOrder::RGB);
  if (s.ok()) s = f.run(api::view_of(in), &out);
  const double total = now_ms() - t0;
  if (!s.ok()) return report_failure(s);
  s = image_put(&outputs, pos[1], api::image_of(std::move(out)));
  if (!s.ok()) return report_failure(s);

  const char* kind = in.channels == 1 ? "grey" : "rgb";
  if (json) {
    Json j;
    j.begin_object();
    j.key("operation").str("filter");
    j.key("kernel").str(kernel.name);
    j.key("size").num(kernel.size);
    j.key("divisor").num(int64_t(kernel.divisor));
    j.key("border").str(filter::border_name(border));
    j.key("width").num(in.width);
    j.key("height").num(in.height);
    j.key("channels").num(in.channels);
    if (explain) {
      j.key("tuning").str(f.tuning());
      j.key("path").str(f.path());
    }
    j.end_object();
    std::printf("%s\n", j.text().c_str());
  } else {
    std::printf("filter %s %dx%d /%d, border %s: %dx%d %s\n", kernel.name.c_str(), kernel.size,
                kernel.size, int(kernel.divisor), filter::border_name(border), in.width,
                in.height, kind);
    if (explain) std::printf("tuning: %s\npath: %s\n", f.tuning().c_str(), f.path().c_str());
  }
  s = outputs.commit();
  if (!s.ok()) return report_failure(s);
  print_timings("filter", total, f.timings());
  return kExitOk;
}

}  // namespace parvis
