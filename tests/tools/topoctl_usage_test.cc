// topoctl as a new user meets it: a misspelt command is an error in every
// form, and text output reads in order when stdout and stderr share a pipe.
#include <string>

#include <gtest/gtest.h>

#include "tests/support/topoctl_run.h"

namespace {

using topo::testing::run_topoctl;

TEST(TopoctlUsage, UnknownCommandIsAnErrorInEveryForm) {
  for (const char* args : {"nosuch", "nosuch --help", "nosuch -h", "--help nosuch", "nosuch --version", "'' --help",
                           "nosuch show --help", "Show --help"}) {
    auto r = run_topoctl(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out << r.err;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_NE(r.err.find("unknown command"), std::string::npos) << args << ": " << r.err;
    EXPECT_NE(r.err.find("estimate"), std::string::npos) << "the message lists the commands: " << r.err;
  }
}

TEST(TopoctlUsage, KnownCommandsAndMainHelpStillWork) {
  EXPECT_EQ(run_topoctl("--help").code, 0);
  EXPECT_EQ(run_topoctl("show --help").code, 0);
  EXPECT_EQ(run_topoctl("--version").code, 0);
  EXPECT_EQ(run_topoctl("").code, 2);  // no command at all
}

// Both streams into one pipe, as `topoctl estimate ... 2>&1 | less` or a CI
// log sees them: the report first, each warning on a line of its own after it.
TEST(TopoctlUsage, EstimateWarningsFollowTheReportInOnePipe) {
  auto r = run_topoctl(
      "estimate --params 175B --gpus 64 --step-time 100ms "
      "--synthetic leafspine:leaves=4,hosts_per_leaf=8,spines=2,oversub=2 --leaves 4 2>&1 | cat");
  ASSERT_EQ(r.code, 0) << r.out;
  size_t fits = r.out.find("  fits the window         no\n");
  size_t warning = r.out.find("warning: ");
  ASSERT_NE(fits, std::string::npos) << r.out;
  ASSERT_NE(warning, std::string::npos) << r.out;
  EXPECT_LT(fits, warning) << r.out;
  // Every warning starts a line and nothing of the report follows one.
  for (size_t at = warning; at != std::string::npos; at = r.out.find("warning: ", at + 1))
    EXPECT_EQ(r.out[at - 1], '\n') << r.out;
  EXPECT_EQ(r.out.find("  ", warning), std::string::npos) << "report text after a warning:\n" << r.out;
}

}  // namespace
