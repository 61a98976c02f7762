// Hosts named in files and on command lines (fabric/hosts_field.h,
// find_hosts in fabric/fabric.h): one way from names to the fabric's
// hosts, and errors that say which name is wrong and where.
#include "fabric/hosts_field.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.h"
#include "fabric/synthetic.h"

namespace topo {
namespace {

std::vector<std::string> names_of(const Fabric& f, const std::vector<NodeId>& hosts) {
  std::vector<std::string> out;
  for (NodeId h : hosts) out.push_back(f.node(h).name);
  return out;
}

// The message of the ParseError that reading `expression` throws, after
// checking it names the file, the line and the field.
std::string refusal(const Fabric& f, const std::string& expression, const std::string& field = "hosts") {
  try {
    read_hosts_field(expression, f, "jobs.txt", 7, field);
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), "jobs.txt");
    EXPECT_EQ(e.line(), 7);
    std::string what = e.what();
    EXPECT_NE(what.find(field + " field"), std::string::npos) << what;
    return what;
  }
  ADD_FAILURE() << "'" << expression << "' was accepted";
  return "";
}

TEST(HostsField, NamesComeBackInTheOrderWrittenDuplicatesKept) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=1");
  auto hosts = read_hosts_field("gpu[007-008],gpu001,gpu007", f, "jobs.txt", 1);
  EXPECT_EQ(names_of(f, hosts), (std::vector<std::string>{"gpu007", "gpu008", "gpu001", "gpu007"}));
  EXPECT_TRUE(read_hosts_field("", f, "jobs.txt", 1).empty());
}

TEST(HostsField, ErrorsNameTheFileLineFieldAndName) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=1");
  EXPECT_NE(refusal(f, "gpu001,nosuch,alsonot").find("'nosuch' is not a host of the fabric"), std::string::npos);
  EXPECT_NE(refusal(f, "gpu[001-", "host").find("host field 'gpu[001-'"), std::string::npos);
  // More names than the fabric has hosts: refused before they are written out.
  std::string many = refusal(f, "gpu[000001-999999]");
  EXPECT_NE(many.find("gpu[000001-999999]"), std::string::npos) << many;
  // A name of a megabyte is quoted in 64 bytes.
  std::string long_name = refusal(f, std::string(1 << 20, 'x'));
  EXPECT_LT(long_name.size(), 256u) << long_name.size();
}

TEST(FindHosts, NamesTheUnknownAndCountsThoseNotShown) {
  Fabric f = make_synthetic("leafspine:leaves=2,hosts_per_leaf=4,spines=1");
  std::vector<std::string> names = {"gpu002", "gpu001"};
  EXPECT_EQ(names_of(f, find_hosts(f, names)), names);
  for (int i = 0; i < 20; ++i) names.push_back("stranger" + std::to_string(i));
  names.push_back(std::string(1 << 20, 'y'));
  try {
    find_hosts(f, names);
    FAIL() << "strangers were accepted";
  } catch (const FabricError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("unknown hosts stranger0, stranger1,"), std::string::npos) << what;
    EXPECT_NE(what.find("stranger7 and 13 more"), std::string::npos) << what;
    EXPECT_EQ(what.find("stranger8"), std::string::npos) << what;
    EXPECT_LT(what.size(), 1024u);
  }
}

}  // namespace
}  // namespace topo
