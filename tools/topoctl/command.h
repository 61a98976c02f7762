// How topoctl's subcommands plug into the command line.
//
// Each subcommand registers its options on a CLI11 sub-app and returns the
// function that runs it; main() parses, runs the chosen one and turns its
// result or exception into an exit code.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace topoctl {

// Exit codes shared by every subcommand.
inline constexpr int kOk = 0;
inline constexpr int kFindings = 1;  // lint found faults; diff found changes
inline constexpr int kError = 2;     // bad input, unreadable file, database error

using Run = std::function<int()>;

Run add_discover(CLI::App& app);
Run add_show(CLI::App& app);
Run add_lint(CLI::App& app);
Run add_export(CLI::App& app);
Run add_diff(CLI::App& app);
Run add_path(CLI::App& app);
Run add_snapshots(CLI::App& app);
Run add_estimate(CLI::App& app);
Run add_place(CLI::App& app);
Run add_ring(CLI::App& app);
Run add_job(CLI::App& app);
Run add_simulate(CLI::App& app);
Run add_score(CLI::App& app);
Run add_report(CLI::App& app);
Run add_health(CLI::App& app);
Run add_baseline(CLI::App& app);
Run add_draw(CLI::App& app);
Run add_serve(CLI::App& app);
Run add_metrics(CLI::App& app);
Run add_route(CLI::App& app);

}  // namespace topoctl
