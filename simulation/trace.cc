#include "simulation/trace.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "common/error.h"
#include "common/line_source.h"
#include "common/quote.h"

namespace topo {

double Trace::offered_gpus() const {
  if (jobs.size() < 2) return 0;
  auto [first, last] = std::minmax_element(
      jobs.begin(), jobs.end(), [](const TraceJob& a, const TraceJob& b) { return a.submit_s < b.submit_s; });
  double span = last->submit_s - first->submit_s;
  if (span <= 0) return 0;
  double gpu_seconds = 0;
  for (const TraceJob& job : jobs) gpu_seconds += job.gpus * job.duration_s;
  return gpu_seconds / span;
}

namespace {

constexpr std::string_view kIdColumn = "job_id";
constexpr std::string_view kSubmitColumn = "submission_time";
constexpr std::string_view kDurationColumn = "duration";
constexpr std::string_view kGpuColumn = "num_gpu";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// The ITP traces quote nothing, so a plain split on commas is the format.
std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    fields.push_back(
        trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return fields;
}

struct Columns {
  size_t id = 0, submit = 0, duration = 0, gpus = 0;
  size_t count = 0;  // fields in the header
};

Columns find_columns(const std::string& path, std::string_view header) {
  std::vector<std::string_view> names = split_fields(header);
  if (!names.empty() && names.front().starts_with("\xEF\xBB\xBF")) names.front().remove_prefix(3);  // UTF-8 BOM
  auto find = [&](std::string_view name) {
    auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end())
      throw ParseError(path, 1,
                       fmt::format("the header has no column '{}'; expected {},{},{},{}", name, kIdColumn,
                                   kSubmitColumn, kDurationColumn, kGpuColumn));
    return static_cast<size_t>(it - names.begin());
  };
  Columns c;
  c.id = find(kIdColumn);
  c.submit = find(kSubmitColumn);
  c.duration = find(kDurationColumn);
  c.gpus = find(kGpuColumn);
  c.count = names.size();
  return c;
}

double parse_seconds(const std::string& path, int line, std::string_view column, std::string_view text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value))
    throw ParseError(path, line,
                     fmt::format("column '{}': expected a number of seconds, got '{}'", column, shown(text)));
  if (value < 0)
    throw ParseError(path, line, fmt::format("column '{}': expected seconds >= 0, got '{}'", column, shown(text)));
  return value;
}

int parse_gpus(const std::string& path, int line, std::string_view text) {
  long long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec == std::errc::result_out_of_range ||
      (ec == std::errc() && end == text.data() + text.size() && value > std::numeric_limits<int>::max()))
    throw ParseError(path, line,
                     fmt::format("column '{}': expected a whole number of GPUs, got '{}'", kGpuColumn, shown(text)));
  if (ec != std::errc() || end != text.data() + text.size())
    throw ParseError(path, line,
                     fmt::format("column '{}': expected a whole number of GPUs, got '{}'", kGpuColumn, shown(text)));
  if (value < 1)
    throw ParseError(path, line,
                     fmt::format("column '{}': expected at least 1 GPU, got '{}'", kGpuColumn, shown(text)));
  return static_cast<int>(value);
}

void sort_by_submission(std::vector<TraceJob>& jobs) {
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.submit_s < b.submit_s; });
}

}  // namespace

Trace read_trace_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ParseError(path, 0, fmt::format("cannot read: {}", std::strerror(errno)));
  Trace trace;
  trace.source = path;
  // The largest ITP trace is under 1 MB: a gigabyte is no trace.
  LineSource lines(in, path, kMaxLineBytes, uint64_t{1} << 30);
  std::string_view text;
  int line_no = 0;
  std::optional<Columns> columns;
  while (lines.next(text)) {
    line_no = lines.number();
    std::string_view line = trim(text);
    if (line.empty()) continue;
    if (line.find('\0') != std::string_view::npos)
      throw ParseError(path, line_no, "holds a NUL byte; expected CSV text");
    if (!columns) {
      columns = find_columns(path, line);
      continue;
    }
    std::vector<std::string_view> fields = split_fields(line);
    if (fields.size() != columns->count)
      throw ParseError(path, line_no,
                       fmt::format("expected {} fields like the header, got {}", columns->count, fields.size()));
    TraceJob job;
    job.id = std::string(fields[columns->id]);
    if (job.id.empty())
      throw ParseError(path, line_no, fmt::format("column '{}': expected a job id, got nothing", kIdColumn));
    job.submit_s = parse_seconds(path, line_no, kSubmitColumn, fields[columns->submit]);
    job.duration_s = parse_seconds(path, line_no, kDurationColumn, fields[columns->duration]);
    job.gpus = parse_gpus(path, line_no, fields[columns->gpus]);
    trace.jobs.push_back(std::move(job));
  }
  if (lines.bad()) throw ParseError(path, 0, "read error");
  if (!columns)
    throw ParseError(path, 0,
                     fmt::format("is empty; expected a header {},{},{},{} and one job a line", kIdColumn, kSubmitColumn,
                                 kDurationColumn, kGpuColumn));
  sort_by_submission(trace.jobs);
  return trace;
}

Trace scale_trace(Trace trace, int fabric_gpus, const TraceScaling& scaling) {
  if (fabric_gpus < 1) throw std::invalid_argument(fmt::format("scale_trace: the fabric has {} GPUs", fabric_gpus));
  if (!(scaling.gpu_factor > 0) || !std::isfinite(scaling.gpu_factor))
    throw std::invalid_argument(fmt::format("scale_trace: gpu_factor must be > 0, got {}", scaling.gpu_factor));
  if (!(scaling.load >= 0) || !std::isfinite(scaling.load))
    throw std::invalid_argument(fmt::format("scale_trace: load must be >= 0, got {}", scaling.load));

  sort_by_submission(trace.jobs);
  if (scaling.max_jobs > 0 && trace.jobs.size() > scaling.max_jobs) trace.jobs.resize(scaling.max_jobs);

  for (TraceJob& job : trace.jobs) {
    double gpus = std::max(1.0, std::round(job.gpus * scaling.gpu_factor));
    job.gpus = static_cast<int>(std::min<double>(gpus, fabric_gpus));
  }

  double offered = trace.offered_gpus();
  if (scaling.load > 0 && offered > 0) {
    // One factor on every gap keeps the arrival pattern (bursts, diurnal
    // swings) while the offered load becomes the target.
    double factor = offered / (scaling.load * fabric_gpus);
    double first = trace.jobs.front().submit_s;
    for (TraceJob& job : trace.jobs) job.submit_s = first + (job.submit_s - first) * factor;
  }
  return trace;
}

namespace {

// The generator's size mix: the ITP clusters' shares for 1-64 GPUs
// (1: 77%, 2: 1.3%, 4: 2.9%, 8: 17%, 16-64: 2.4% over 29,810 jobs) with the
// single-GPU share lowered to make room for the large-job tail that the ITP
// clusters, at most 64 GPUs a job, could not show; a few sizes are not
// powers of two, as on real clusters. Percent of jobs; sums to 100.
struct SizeShare {
  int gpus;
  double percent;
};
constexpr std::array<SizeShare, 17> kSizeMix{{
    {1, 70.0},
    {2, 1.5},
    {4, 3.0},
    {8, 15.5},
    {16, 2.0},
    {24, 0.3},
    {32, 2.0},
    {48, 0.2},
    {64, 1.0},
    {96, 0.2},
    {128, 1.0},
    {256, 1.2},
    {384, 0.2},
    {512, 0.8},
    {1024, 0.6},
    {2048, 0.3},
    {4096, 0.2},
}};

// Run times: log-normal around a median that grows by 2^0.3 per doubling of
// the size (ITP: median 2.1 h at 1 GPU, 4.1 h at 8, 23 h at 32), with the
// spread of the ITP durations (p10 / p50 / p90 = 0.33 / 2.2 / 10 h gives
// sigma ~1.2), clipped at 3 sigma so one draw cannot dominate a short trace.
constexpr double kDurationGrowth = 0.3;
constexpr double kDurationSigma = 1.2;
constexpr double kDurationClip = 3.0;

// Uniform in (0, 1) from 53 bits of the engine: mt19937_64's output is
// fixed by the standard, std::*_distribution's is not, so the generator
// does its own sampling and gives the same trace on every platform.
double uniform_open(std::mt19937_64& engine) { return (static_cast<double>(engine() >> 11) + 0.5) * 0x1.0p-53; }

// Inverse of the standard normal CDF (Acklam's rational approximation,
// relative error below 1.2e-9).
double normal_quantile(double p) {
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                                 1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01, -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                 3.754408661907416e+00};
  constexpr double low = 0.02425, high = 1 - low;
  if (p < low) {
    double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > high) {
    double q = std::sqrt(-2 * std::log(1 - p));
    return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

void check_shape(int fabric_gpus, const TraceShape& shape) {
  if (fabric_gpus < 1) throw std::invalid_argument(fmt::format("generate_trace: the fabric has {} GPUs", fabric_gpus));
  if (!(shape.load > 0) || !std::isfinite(shape.load))
    throw std::invalid_argument(fmt::format("generate_trace: load must be > 0, got {}", shape.load));
  if (!(shape.median_duration_s > 0) || !std::isfinite(shape.median_duration_s))
    throw std::invalid_argument(
        fmt::format("generate_trace: median_duration_s must be > 0, got {}", shape.median_duration_s));
  if (shape.jobs > kMaxGeneratedJobs)
    throw std::invalid_argument(
        fmt::format("generate_trace: {} jobs; expected at most {}", shape.jobs, kMaxGeneratedJobs));
}

// The size mix cut at the fabric: sizes it cannot hold are not drawn and
// the rest renormalised, as a cluster never sees larger jobs.
struct SizeMix {
  std::vector<SizeShare> sizes;
  double total = 0;  // of their percents
};

SizeMix sizes_that_fit(int fabric_gpus) {
  SizeMix mix;
  for (const SizeShare& s : kSizeMix)
    if (s.gpus <= fabric_gpus) {
      mix.sizes.push_back(s);
      mix.total += s.percent;
    }
  return mix;
}

// One job's GPUs from the mix, then its duration: log-normal about a median
// that grows with its size.
void draw_job(std::mt19937_64& engine, const SizeMix& mix, const TraceShape& shape, TraceJob& job) {
  double pick = uniform_open(engine) * mix.total;
  job.gpus = mix.sizes.back().gpus;
  for (const SizeShare& s : mix.sizes) {
    if (pick < s.percent) {
      job.gpus = s.gpus;
      break;
    }
    pick -= s.percent;
  }
  double z = std::clamp(normal_quantile(uniform_open(engine)), -kDurationClip, kDurationClip);
  double median = shape.median_duration_s * std::pow(static_cast<double>(job.gpus), kDurationGrowth);
  job.duration_s = std::max(1.0, std::round(median * std::exp(kDurationSigma * z)));
}

// Poisson arrivals, conditioned on the span that offers exactly `load`:
// exponential gaps scaled so the last submission lands at
// gpu_seconds / (load x fabric_gpus); the first job arrives at 0.
void spread_arrivals(std::vector<TraceJob>& jobs, const std::vector<double>& gaps, double gpu_seconds, double load,
                     int fabric_gpus) {
  if (jobs.size() < 2) return;
  double span = gpu_seconds / (load * fabric_gpus);
  double sum = 0;
  for (size_t i = 1; i < jobs.size(); ++i) sum += gaps[i];
  double t = 0;
  for (size_t i = 1; i < jobs.size(); ++i) {
    t += gaps[i];
    jobs[i].submit_s = span * t / sum;
  }
  jobs.back().submit_s = span;  // no rounding drift in the load
}

}  // namespace

Trace generate_trace(int fabric_gpus, const TraceShape& shape) {
  check_shape(fabric_gpus, shape);
  const SizeMix mix = sizes_that_fit(fabric_gpus);
  Trace trace;
  trace.source = fmt::format("generated:jobs={},load={},seed={},median_duration_s={},fabric_gpus={}", shape.jobs,
                             shape.load, shape.seed, shape.median_duration_s, fabric_gpus);
  trace.jobs.resize(shape.jobs);
  std::mt19937_64 engine(shape.seed);
  std::vector<double> gaps(shape.jobs, 0.0);
  double gpu_seconds = 0;
  for (size_t i = 0; i < shape.jobs; ++i) {
    TraceJob& job = trace.jobs[i];
    job.id = fmt::format("gen{:06}", i + 1);
    draw_job(engine, mix, shape, job);
    gpu_seconds += job.gpus * job.duration_s;
    gaps[i] = -std::log(uniform_open(engine));  // exponential, mean 1
  }
  spread_arrivals(trace.jobs, gaps, gpu_seconds, shape.load, fabric_gpus);
  return trace;
}

}  // namespace topo
