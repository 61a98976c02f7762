#include "common/hostlist.h"

#include <algorithm>
#include <random>
#include <set>

#include <gtest/gtest.h>

namespace topo {
namespace {

using Names = std::vector<std::string>;

TEST(Hostlist, ExpandsRangesKeepingZeroPadding) {
  EXPECT_EQ(expand_hostlist("gpu[001-004,007],login1"),
            (Names{"gpu001", "gpu002", "gpu003", "gpu004", "gpu007", "login1"}));
  // The padding is the width of the low end, as in Slurm.
  EXPECT_EQ(expand_hostlist("n[08-10]"), (Names{"n08", "n09", "n10"}));
  EXPECT_EQ(expand_hostlist("n[8-10]"), (Names{"n8", "n9", "n10"}));
  EXPECT_EQ(expand_hostlist("n[098-100]"), (Names{"n098", "n099", "n100"}));
  EXPECT_EQ(expand_hostlist("n[5]"), (Names{"n5"}));
  EXPECT_EQ(expand_hostlist("[1-2]"), (Names{"1", "2"}));
}

TEST(Hostlist, ExpandsSeveralBracketGroupsFirstGroupSlowest) {
  EXPECT_EQ(expand_hostlist("rack[1-2]-n[01-02]"), (Names{"rack1-n01", "rack1-n02", "rack2-n01", "rack2-n02"}));
  EXPECT_EQ(expand_hostlist("a[1,3]b[7]c[0-1]"), (Names{"a1b7c0", "a1b7c1", "a3b7c0", "a3b7c1"}));
}

TEST(Hostlist, SeparatorsAreCommasSpacesAndTabsOutsideBrackets) {
  EXPECT_EQ(expand_hostlist("a1, b2\tc[3-4] ,,d"), (Names{"a1", "b2", "c3", "c4", "d"}));
  EXPECT_TRUE(expand_hostlist("").empty());
  EXPECT_TRUE(expand_hostlist(" , ").empty());
  // Duplicates are kept, in the order written.
  EXPECT_EQ(expand_hostlist("x1,x[1-2]"), (Names{"x1", "x1", "x2"}));
}

void expect_malformed(std::string_view expr, size_t position, const std::string& says) {
  SCOPED_TRACE(std::string(expr));
  try {
    expand_hostlist(expr);
    ADD_FAILURE() << "accepted";
  } catch (const HostlistError& e) {
    EXPECT_EQ(e.expression(), expr);
    EXPECT_EQ(e.position(), position);
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
  }
}

TEST(Hostlist, MalformedExpressionsSayWhatWasExpectedAndWhere) {
  expect_malformed("gpu[001-004", 3, "expected ']' to close this '['");
  expect_malformed("gpu001-004]", 10, "']' without a '['");
  expect_malformed("a[1-[2]]", 4, "expected ']' to close the '[' at offset 1");
  expect_malformed("gpu[]", 4, "expected a number or a range");
  expect_malformed("gpu[a-b]", 4, "expected a number or a range like 1-4");
  expect_malformed("gpu[1-]", 4, "found '1-'");
  expect_malformed("gpu[-3]", 4, "found '-3'");
  expect_malformed("gpu[1,,2]", 6, "found ''");
  expect_malformed("gpu[1-2-3]", 4, "found '1-2-3'");
  expect_malformed("gpu[5-2]", 4, "runs backwards");
  expect_malformed("n[1-2]-ib", 6, "no suffix after it");
  expect_malformed("n[0-70000]", 2, "more than 65536 hosts");
  expect_malformed("n[0-60000]x[0-60000]", 0, "more than");
  expect_malformed("ok1,n[1234567890123456789]", 6, "too long");
}

// The cap counts names before writing any out, and the name that passes it
// is the one named; no count overflows, whatever the cap.
TEST(Hostlist, ACapOnNamesIsCheckedBeforeExpanding) {
  EXPECT_EQ(expand_hostlist("a[1-10],b[1-10]", 20).size(), 20u);
  try {
    expand_hostlist("a[1-10],b[1-10]", 19);
    ADD_FAILURE() << "expanded past the cap";
  } catch (const HostlistError& e) {
    EXPECT_EQ(e.position(), 8u);
    EXPECT_NE(std::string(e.what()).find("expands to more than 19 names"), std::string::npos) << e.what();
  }
  const std::string huge = "a[0-65535]b[0-65535]c[0-65535]d[0-65535]e[0-65535]";
  EXPECT_THROW(expand_hostlist(huge, UINT64_MAX), HostlistError);
  EXPECT_THROW(expand_hostlist(huge), HostlistError);
}

TEST(Hostlist, CompressesIntoTheShortestSlurmForm) {
  EXPECT_EQ(compress_hostlist(Names{"gpu007", "gpu001", "gpu003", "gpu002", "gpu004", "login1"}),
            "gpu[001-004,007],login1");
  EXPECT_EQ(compress_hostlist(Names{"n9", "n10", "n11"}), "n[9-11]");
  EXPECT_EQ(compress_hostlist(Names{"n098", "n099", "n100"}), "n[098-100]");
  EXPECT_EQ(compress_hostlist(Names{"n01", "n02", "n100"}), "n[01-02,100]");
  EXPECT_EQ(compress_hostlist(Names{"n001", "n5"}), "n001,n5");
  EXPECT_EQ(compress_hostlist(Names{"a", "b", "a"}), "a,b");
  EXPECT_EQ(compress_hostlist(Names{"x1"}), "x1");
  EXPECT_EQ(compress_hostlist(Names{}), "");
  EXPECT_EQ(compress_hostlist(Names{"", "y2"}), "y2");
}

TEST(Hostlist, CompressesASecondDimensionWhenThatIsShorter) {
  EXPECT_EQ(compress_hostlist(expand_hostlist("rack[1-4]-n[01-16]")), "rack[1-4]-n[01-16]");
  // The last group must end the name, so a merged single number keeps brackets.
  EXPECT_EQ(compress_hostlist(Names{"rack1-n01", "rack2-n01", "rack3-n01"}), "rack[1-3]-n[01]");
  // Not merged when that is no shorter.
  EXPECT_EQ(compress_hostlist(Names{"a1b5", "a3b5"}), "a1b5,a3b5");
  // Different sets below do not merge.
  EXPECT_EQ(compress_hostlist(Names{"r1n1", "r1n2", "r2n1"}), "r1n[1-2],r2n1");
}

TEST(Hostlist, SortsNumericallyWithinAPrefix) {
  EXPECT_TRUE(natural_less("gpu9", "gpu10"));
  EXPECT_FALSE(natural_less("gpu10", "gpu9"));
  EXPECT_TRUE(natural_less("a2b", "a10a"));
  EXPECT_TRUE(natural_less("leaf", "leaf1"));
  EXPECT_EQ(compress_hostlist(Names{"b1", "a10", "a9"}), "a[9-10],b1");
}

// Whatever the set, compressing and expanding gives the same set back.
TEST(Hostlist, CompressThenExpandIsTheIdentityOnSets) {
  std::mt19937 rng(20240611);
  const Names prefixes{"gpu", "n", "rack1-n", "rack2-n", "r3c", "login", "x-y_z.", ""};
  for (int round = 0; round < 500; ++round) {
    Names names;
    int count = std::uniform_int_distribution<int>(1, 40)(rng);
    for (int i = 0; i < count; ++i) {
      const std::string& p = prefixes[rng() % prefixes.size()];
      int width = std::uniform_int_distribution<int>(0, 4)(rng);
      int value = std::uniform_int_distribution<int>(0, rng() % 2 ? 12 : 1200)(rng);
      std::string digits = std::to_string(value);
      if (static_cast<int>(digits.size()) < width) digits.insert(0, width - digits.size(), '0');
      names.push_back(p.empty() && rng() % 4 == 0 ? "plain" + std::to_string(i % 3) : p + digits);
    }
    std::string compressed = compress_hostlist(names);
    SCOPED_TRACE(compressed);
    Names back = expand_hostlist(compressed);
    std::set<std::string> want(names.begin(), names.end());
    std::set<std::string> got(back.begin(), back.end());
    EXPECT_EQ(got, want);
    EXPECT_EQ(back.size(), got.size()) << "compressed form repeats a name";
  }
}

}  // namespace
}  // namespace topo
