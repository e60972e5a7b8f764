// The `minivm` command line: the commands and their option tables on CLI11, usage errors
// (one line, exit 2), and dispatch to run, disasm or a help topic. The one place that
// wires the front end, the runtime, the interpreter, the JIT and the sampler together.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "vm/cli/compare_command.h"
#include "vm/cli/disasm_command.h"
#include "vm/cli/help_format.h"
#include "vm/cli/help_topics.h"
#include "vm/cli/outputs.h"
#include "vm/cli/profile_signals.h"
#include "vm/cli/run_command.h"
#include "vm/cli/run_flags.h"
#include "vm/text.h"

namespace {

constexpr const char* kVersion = "minivm 0.1.0";

constexpr const char* kSynopsis =
    "minivm runs Mini programs on a template interpreter and a baseline JIT, with a\n"
    "cooperative sampling profiler (JEP 518) and the samplers it is compared with.\n\n"
    "usage: minivm run [OPTIONS] PROGRAM.mini\n"
    "       minivm compare [--xint|--xcomp] [--interval=T] [--html FILE] [OPTIONS] PROGRAM.mini\n"
    "       minivm disasm [--templates] [--jit] [PROGRAM.mini]\n"
    "       minivm help [reasons | samplers | run | compare | disasm]\n"
    "       minivm --help | --version\n";

constexpr const char* kExitStatus =
    "Exit status: main's int result modulo 256 (a note on stderr says so when the result is\n"
    "not 0-255); 1 on a Mini runtime error, or when the program's output or a profile could\n"
    "not be written and it would have been 0; 2 on a compile error or bad usage.";

// The usage error every bad command line ends in: what is wrong, where to read more. The
// message quotes what the user typed, which may be of any length.
[[noreturn]] void usage_error(const std::string& message, const CLI::App* command) {
  std::string help = command ? "minivm " + command->get_name() + " --help" : "minivm --help";
  cli::release_profile_signals();  // nothing to profile: a pending SIGINT ends it as it would have
  std::fprintf(stderr, "minivm: %s\nTry '%s'.\n", vm::with_long_words_shortened(message).c_str(), help.c_str());
  std::exit(2);
}

// Arguments CLI11 left over (the commands allow extras so that the message is ours). The
// first `--` among them is the end of the options, as POSIX has it: CLI11 has taken what
// follows it as positionals (the program), and left the rest, operands too, here.
void refuse_extras(const CLI::App& app, const CLI::App* command, const char* noun, const std::string& positional) {
  std::vector<std::string> extras = app.remaining();
  auto end_of_options = std::find(extras.begin(), extras.end(), "--");
  std::string where = command ? " for " + command->get_name() : "";
  for (auto e = extras.begin(); e != end_of_options; ++e)
    if (e->size() > 1 && (*e)[0] == '-')
      usage_error("unknown option '" + e->substr(0, e->find('=')) + "'" + where, command);
  if (end_of_options != extras.end()) extras.erase(end_of_options);
  if (extras.empty()) return;
  if (command == nullptr) usage_error("unknown command '" + extras[0] + "'", nullptr);
  usage_error(command->get_name() + " takes one " + noun + ", got '" + positional + "' and '" + extras[0] + "'", command);
}

std::string topics_footer() {
  std::string text = "Help topics (minivm help TOPIC, or minivm help COMMAND):\n";
  size_t n = 0;
  const cli::HelpTopic* topics = cli::help_topics(n);
  for (size_t i = 0; i < n; i++) text += fmt::format("  {:<13} {}\n", topics[i].name, topics[i].what);
  return text + "\n" + kExitStatus;
}

// The end of a command that profiles nothing (help, --version, disasm).
int finish(int status) {
  cli::release_profile_signals();
  return cli::flush_stdout() ? status : cli::failed_output_status(status);
}

const CLI::App* command_named(const CLI::App& app, const std::string& name) {
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; }))
    if (command->get_name() == name && name != "help") return command;
  return nullptr;
}

// minivm help [TOPIC | COMMAND]
int help_command(const CLI::App& app, std::vector<std::string> args) {
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) args.clear();
  if (args.size() > 1) usage_error("help takes one topic, got '" + args[0] + "' and '" + args[1] + "'", nullptr);
  if (args.empty()) {
    std::cout << app.help("", CLI::AppFormatMode::All);
  } else if (const cli::HelpTopic* t = cli::help_topic(args[0])) {
    t->print(std::cout);
  } else if (const CLI::App* command = command_named(app, args[0])) {
    std::cout << command->help("minivm");
  } else {
    usage_error("unknown help topic '" + args[0] + "' (" + cli::help_topic_names() + ", or a command)", nullptr);
  }
  return finish(0);
}

}  // namespace

int main(int argc, char** argv) {
  // Only the command named first needs its option table: compare's holds a copy of run's,
  // and building the other two took about 5% of an empty program's run. The help with
  // every command's options, and a command line that names none, need all three.
  std::string named = argc > 1 ? argv[1] : "";
  bool every_table = named != "run" && named != "compare" && named != "disasm";
  CLI::App app{kSynopsis, "minivm"};
  cli::use_help_format(app);
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // a repeated option: the last wins
  app.set_help_flag("-h,--help", "print this help, with every command's options, and exit");
  app.set_version_flag("--version", kVersion, "print the version and exit");
  app.allow_extras();
  app.footer(topics_footer());

  cli::RunOptions run_options;
  CLI::App* run =
      app.add_subcommand("run", "compile PROGRAM.mini and run it; its exit status is main's int result modulo 256");
  run->allow_extras();
  run->set_help_flag("-h,--help", "print run's options and exit");
  run->footer(kExitStatus);
  if (every_table || named == "run") cli::add_run_flags(*run, run_options);

  cli::CompareOptions compare_options;
  CLI::App* compare = app.add_subcommand(
      "compare", "run PROGRAM.mini once under every sampler and print its source with a column per sampler");
  compare->allow_extras();
  compare->set_help_flag("-h,--help", "print compare's options and exit");
  compare->footer(
      "The program's own output comes first, then the comparison on stdout: the lines with samples or polls, the\n"
      "share of each sampler's samples whose top frame is on each (the oracle, exact, first), the kind of poll a\n"
      "line holds, the lines where a sampler is furthest from the oracle marked, and per sampler its failed and\n"
      "biased samples by reason (minivm help reasons).\n\n" + std::string(kExitStatus));
  if (every_table || named == "compare") cli::add_compare_flags(*compare, compare_options);

  cli::DisasmOptions disasm_options;
  CLI::App* disasm = app.add_subcommand("disasm", "print PROGRAM.mini's bytecode, javap -c style, with source lines");
  disasm->allow_extras();
  disasm->set_help_flag("-h,--help", "print disasm's options and exit");
  disasm->footer("Exit status: 0; 2 on a compile error or bad usage; 1 if the listing could not be written.");
  if (every_table || named == "disasm") cli::add_disasm_flags(*disasm, disasm_options);

  // Listed with the commands; its argument is read by help_command, not by CLI11, since a
  // topic may be a command's name.
  app.add_subcommand("help", "print a help topic (" + cli::help_topic_names() + "), a command's options, or this help");

  if (argc < 2) {
    cli::release_profile_signals();
    std::fputs(app.help().c_str(), stderr);
    return 2;
  }
  // CLI11 would take the next argument as the value of `--name=`: refuse it instead.
  for (int i = 1; i < argc; i++) {
    std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.size() > 3 && arg.rfind("--", 0) == 0 && arg.back() == '=' && arg.find('=') == arg.size() - 1)
      usage_error(arg.substr(0, arg.size() - 1) + " needs a value after '='", nullptr);
  }
  if (std::string(argv[1]) == "help") return help_command(app, std::vector<std::string>(argv + 2, argv + argc));
  if (std::string(argv[1]) == "compare") compare_options.args.assign(argv + 2, argv + argc);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    // minivm --help shows every command's options; minivm COMMAND --help its own.
    std::cout << app.help("", app.get_subcommands().empty() ? CLI::AppFormatMode::All : CLI::AppFormatMode::Normal);
    return finish(0);
  } catch (const CLI::Success& e) {
    return finish(app.exit(e));
  } catch (const CLI::ParseError& e) {
    std::vector<CLI::App*> commands = app.get_subcommands();
    CLI::App* command = commands.empty() ? nullptr : commands[0];
    if (command == run && dynamic_cast<const CLI::RequiredError*>(&e)) usage_error("run needs a program file", run);
    if (command == compare && dynamic_cast<const CLI::RequiredError*>(&e))
      usage_error("compare needs a program file", compare);
    usage_error(e.what(), command);
  }
  try {
    refuse_extras(app, nullptr, "", "");
    if (run->parsed()) {
      refuse_extras(*run, run, "program", run_options.program);
      cli::resolve_run_flags(*run, run_options);
      cli::run_command(std::move(run_options));
    }
    if (compare->parsed()) {
      refuse_extras(*compare, compare, "program", compare_options.run.program);
      cli::resolve_compare_flags(*compare, compare_options);
      if (compare_options.sweep) {
        cli::release_profile_signals();  // each run holds its own
        cli::compare_sweep(*compare_options.sweep, cli::arguments_for_each_run(compare_options.args),
                           compare_options.html_path);
      }
      cli::compare_command(std::move(compare_options));
    }
    if (disasm->parsed()) {
      cli::release_profile_signals();  // held from the start (profile_signals.h); run and compare release them
      refuse_extras(*disasm, disasm, "program", disasm_options.program);
      cli::resolve_disasm_flags(disasm_options);
      return finish(cli::disasm_command(disasm_options));
    }
  } catch (const CLI::ParseError& e) {
    usage_error(e.what(), run->parsed() ? run : compare->parsed() ? compare : disasm);
  }
  usage_error("a command is needed: run, compare, disasm or help", nullptr);
}
