// Job traces: the ITP CSV reader on the real traces and on malformed files,
// scaling to a larger fabric, and the synthetic generator.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "common/error.h"
#include "simulation/trace.h"

namespace topo {
namespace {

const std::string kFixtures = std::string(TOPO_FIXTURES) + "/trace/";
// The ITP traces 01-05, vendored with their MIT licence.
const std::string kItp = std::string(TOPO_FIXTURES) + "/traces/itp/";

std::string itp(int cluster) { return kItp + "cluster0" + std::to_string(cluster) + ".csv"; }

// The last comma-separated field of each data line, counted without the
// reader: what the trace should hold.
std::map<int, size_t> gpu_counts_by_hand(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // header
  std::map<int, size_t> counts;
  while (std::getline(in, line))
    if (!line.empty()) ++counts[std::stoi(line.substr(line.rfind(',') + 1))];
  return counts;
}

bool sorted_by_submission(const Trace& t) {
  return std::is_sorted(t.jobs.begin(), t.jobs.end(),
                        [](const TraceJob& a, const TraceJob& b) { return a.submit_s < b.submit_s; });
}

TEST(TraceCsv, ReadsEveryItpCluster) {
  for (int c = 1; c <= 5; ++c) {
    Trace t = read_trace_csv(itp(c));
    std::map<int, size_t> expected = gpu_counts_by_hand(itp(c));
    std::map<int, size_t> got;
    for (const TraceJob& j : t.jobs) {
      ++got[j.gpus];
      EXPECT_FALSE(j.id.empty());
      EXPECT_GE(j.submit_s, 0);
      EXPECT_GE(j.duration_s, 0);
    }
    EXPECT_EQ(got, expected) << itp(c);
    EXPECT_TRUE(sorted_by_submission(t)) << itp(c);
    EXPECT_EQ(t.source, itp(c));
    EXPECT_GT(t.offered_gpus(), 0) << itp(c);
  }
}

TEST(TraceCsv, FindsColumnsByNameAndKeepsTiesInFileOrder) {
  Trace t = read_trace_csv(kFixtures + "reordered_columns.csv");
  ASSERT_EQ(t.jobs.size(), 3u);
  EXPECT_EQ(t.jobs[0].id, "early");
  EXPECT_EQ(t.jobs[1].id, "tie");
  EXPECT_EQ(t.jobs[2].id, "late");
  EXPECT_EQ(t.jobs[0].gpus, 8);
  EXPECT_DOUBLE_EQ(t.jobs[0].submit_s, 10);
  EXPECT_DOUBLE_EQ(t.jobs[0].duration_s, 60);
  EXPECT_EQ(t.jobs[2].gpus, 4);
  EXPECT_DOUBLE_EQ(t.jobs[2].duration_s, 30);
}

struct Malformed {
  std::string file;
  int line;
  std::string field;  // what the message must name
};

TEST(TraceCsv, MalformedFilesNameFileLineAndField) {
  const Malformed cases[] = {
      {"bad_duration.csv", 3, "'duration'"},
      {"missing_duration_column.csv", 1, "'duration'"},
      {"negative_submission.csv", 4, "'submission_time'"},
      {"zero_gpus.csv", 3, "'num_gpu'"},
      {"fractional_gpus.csv", 2, "'num_gpu'"},
      {"short_row.csv", 2, "fields"},
      {"empty.csv", 0, "empty"},
  };
  for (const Malformed& m : cases) {
    std::string path = kFixtures + m.file;
    try {
      read_trace_csv(path);
      ADD_FAILURE() << m.file << " was accepted";
    } catch (const ParseError& e) {
      EXPECT_EQ(e.file(), path);
      EXPECT_EQ(e.line(), m.line) << e.what();
      std::string where = m.line > 0 ? path + ":" + std::to_string(m.line) + ":" : path + ":";
      EXPECT_EQ(std::string(e.what()).rfind(where, 0), 0u) << e.what();
      EXPECT_NE(std::string(e.what()).find(m.field), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(read_trace_csv(kFixtures + "no_such_trace.csv"), ParseError);
}

// Found by fuzzing: a damaged value of kilobytes was quoted whole.
TEST(TraceCsv, ALongBadValueIsQuotedShort) {
  const std::string path = ::testing::TempDir() + "/long_value.csv";
  const std::string value = "0." + std::string(4000, '0') + "x";
  std::ofstream(path) << "job_id,submission_time,duration,num_gpu\nj1,0,10," << value << "\n";
  try {
    read_trace_csv(path);
    ADD_FAILURE() << "accepted";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_NE(std::string(e.what()).find("'num_gpu'"), std::string::npos) << e.what();
    EXPECT_LT(std::string(e.what()).size(), path.size() + 200) << e.what();
  }
}

TEST(TraceCsv, OfferedGpusIsGpuSecondsOverTheSubmissionSpan) {
  Trace t;
  t.jobs = {{"a", 0, 100, 2}, {"b", 50, 10, 4}};
  EXPECT_DOUBLE_EQ(t.offered_gpus(), (2 * 100 + 4 * 10) / 50.0);
  t.jobs[1].submit_s = 0;
  EXPECT_EQ(t.offered_gpus(), 0);  // no span
}

TEST(TraceScaling, KeepsDurationsAndSizeMixAndHitsTheLoad) {
  Trace original = read_trace_csv(itp(4));
  const int fabric = 4096;
  for (double load : {0.5, 0.8, 1.2}) {
    TraceScaling s{.gpu_factor = 4, .load = load, .max_jobs = 5000};
    Trace scaled = scale_trace(original, fabric, s);
    ASSERT_EQ(scaled.jobs.size(), 5000u);
    EXPECT_NEAR(scaled.offered_gpus(), load * fabric, 0.01 * load * fabric);
    double first_old = original.jobs[0].submit_s, first_new = scaled.jobs[0].submit_s;
    double factor = (scaled.jobs.back().submit_s - first_new) / (original.jobs[4999].submit_s - first_old);
    for (size_t i = 0; i < scaled.jobs.size(); ++i) {
      const TraceJob &a = original.jobs[i], &b = scaled.jobs[i];
      ASSERT_EQ(a.id, b.id);
      EXPECT_EQ(b.duration_s, a.duration_s);
      EXPECT_EQ(b.gpus, std::min(4 * a.gpus, fabric));
      EXPECT_NEAR(b.submit_s - first_new, (a.submit_s - first_old) * factor, 1e-6 * (1 + a.submit_s));
    }
  }
}

TEST(TraceScaling, CapsSizesAtTheFabricAndKeepsTimesWithoutALoad) {
  Trace t;
  t.source = "hand";
  t.jobs = {{"a", 0, 100, 64}, {"b", 30, 10, 1}, {"c", 60, 10, 3}};
  Trace scaled = scale_trace(t, 512, TraceScaling{.gpu_factor = 100});
  EXPECT_EQ(scaled.jobs[0].gpus, 512);
  EXPECT_EQ(scaled.jobs[1].gpus, 100);
  EXPECT_EQ(scaled.jobs[2].gpus, 300);
  for (size_t i = 0; i < t.jobs.size(); ++i) EXPECT_EQ(scaled.jobs[i].submit_s, t.jobs[i].submit_s);
  Trace halved = scale_trace(t, 512, TraceScaling{.gpu_factor = 0.5});
  EXPECT_EQ(halved.jobs[1].gpus, 1);  // never below one GPU
  EXPECT_EQ(halved.jobs[2].gpus, 2);  // 1.5 rounds half away from zero
  EXPECT_THROW(scale_trace(t, 0, {}), std::invalid_argument);
  EXPECT_THROW(scale_trace(t, 8, TraceScaling{.gpu_factor = 0}), std::invalid_argument);
}

bool same(const Trace& a, const Trace& b) {
  if (a.jobs.size() != b.jobs.size()) return false;
  for (size_t i = 0; i < a.jobs.size(); ++i)
    if (a.jobs[i].id != b.jobs[i].id || a.jobs[i].gpus != b.jobs[i].gpus || a.jobs[i].submit_s != b.jobs[i].submit_s ||
        a.jobs[i].duration_s != b.jobs[i].duration_s)
      return false;
  return true;
}

TEST(TraceGenerator, DeterministicPerSeed) {
  TraceShape shape{.jobs = 2000, .load = 0.9, .seed = 7};
  Trace a = generate_trace(4096 * 8, shape), b = generate_trace(4096 * 8, shape);
  EXPECT_TRUE(same(a, b));
  shape.seed = 8;
  EXPECT_FALSE(same(a, generate_trace(4096 * 8, shape)));
  EXPECT_TRUE(sorted_by_submission(a));
  std::set<std::string> ids;
  for (const TraceJob& j : a.jobs) ids.insert(j.id);
  EXPECT_EQ(ids.size(), a.jobs.size());
}

TEST(TraceGenerator, SizeMixLoadAndDurations) {
  const int fabric = 16384 * 8;
  TraceShape shape{.jobs = 40000, .load = 0.7, .seed = 3, .median_duration_s = 1200};
  Trace t = generate_trace(fabric, shape);
  ASSERT_EQ(t.jobs.size(), shape.jobs);
  size_t small = 0, tail = 0, powers = 0;
  std::vector<double> single;
  int largest = 0;
  for (const TraceJob& j : t.jobs) {
    small += j.gpus <= 8;
    tail += j.gpus >= 256;
    powers += (j.gpus & (j.gpus - 1)) == 0;
    largest = std::max(largest, j.gpus);
    if (j.gpus == 1) single.push_back(j.duration_s);
    EXPECT_GE(j.duration_s, 1);
  }
  double n = static_cast<double>(t.jobs.size());
  EXPECT_NEAR(small / n, 0.90, 0.01);
  EXPECT_NEAR(tail / n, 0.033, 0.004);
  EXPECT_GT(powers / n, 0.98);
  EXPECT_EQ(largest, 4096);
  EXPECT_NEAR(t.offered_gpus(), shape.load * fabric, 0.01 * shape.load * fabric);
  std::nth_element(single.begin(), single.begin() + single.size() / 2, single.end());
  EXPECT_NEAR(single[single.size() / 2], shape.median_duration_s, 0.05 * shape.median_duration_s);
  EXPECT_EQ(t.jobs.front().submit_s, 0);
}

TEST(TraceGenerator, NoJobLargerThanTheFabric) {
  for (int fabric : {1, 8, 64, 100, 1000}) {
    Trace t = generate_trace(fabric, TraceShape{.jobs = 5000, .load = 0.9, .seed = 11});
    int largest = 0;
    for (const TraceJob& j : t.jobs) largest = std::max(largest, j.gpus);
    EXPECT_LE(largest, fabric);
    // The largest size the mix has below the fabric is drawn.
    int expected = fabric >= 512 ? 512 : fabric >= 96 ? 96 : fabric >= 64 ? 64 : fabric >= 8 ? 8 : 1;
    EXPECT_EQ(largest, expected) << fabric;
  }
  EXPECT_THROW(generate_trace(0, {}), std::invalid_argument);
  EXPECT_TRUE(generate_trace(64, TraceShape{.jobs = 0}).jobs.empty());
  EXPECT_EQ(generate_trace(64, TraceShape{.jobs = 1}).jobs.size(), 1u);
  EXPECT_THROW(generate_trace(64, TraceShape{.jobs = kMaxGeneratedJobs + 1}), std::invalid_argument);
}

}  // namespace
}  // namespace topo
