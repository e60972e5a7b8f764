#include "vm/cli/compare_sweep.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "sampler/profile/pages.h"
#include "sampler/profile/report.h"
#include "vm/cli/outputs.h"

namespace cli {

namespace {

// What compare decides itself or a sweep cannot vary.
constexpr const char* kNotSweepable[] = {"--html", "--sweep", "--budget-out", "--help", "--save", "--diff"};

// One sampler's budget in one run, as the run's --budget-out file gives it.
struct Point {
  std::string sampler;
  double lines[3] = {0, 0, 0}, functions[3] = {0, 0, 0};  // distance, low, high
};

std::vector<Point> read_budget(const std::string& path) {
  std::vector<Point> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::istringstream s(line);
    Point p;
    if (s >> p.sampler >> p.lines[0] >> p.lines[1] >> p.lines[2] >> p.functions[0] >> p.functions[1] >> p.functions[2])
      out.push_back(p);
  }
  return out;
}

// The run for one value: its exit status, its budgets in `points`.
int run_one(const std::vector<std::string>& args, const std::string& setting, const std::string& budget_path,
            std::vector<Point>& points) {
  std::vector<std::string> argv{"/proc/self/exe", "compare", setting, "--budget-out=" + budget_path};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> c;
  for (std::string& a : argv) c.push_back(a.data());
  c.push_back(nullptr);
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    // The program's own output and the listing of each run are not the sweep's output.
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDOUT_FILENO);
    execv(c[0], c.data());
    std::fprintf(stderr, "minivm: --sweep: cannot run minivm again: %s\n", std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0) return 127;
  points = read_budget(budget_path);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string cell(const double d[3]) { return fmt::format("{:.3f} [{:.3f}, {:.3f}]", d[0], d[1], d[2]); }

void write_table(std::string& out, const Sweep& s, const std::vector<std::vector<Point>>& runs,
                 const std::vector<std::string>& samplers, bool lines) {
  size_t vw = s.flag.size();
  for (const std::string& v : s.values) vw = std::max(vw, v.size());
  auto end_row = [&](std::string row) {
    while (!row.empty() && row.back() == ' ') row.pop_back();
    out += row + "\n";
  };
  std::string row = fmt::format("  {:<{}}", s.flag, vw);
  for (const std::string& name : samplers) row += fmt::format("  {:<22}", name);
  end_row(row);
  for (size_t i = 0; i < runs.size(); i++) {
    row = fmt::format("  {:<{}}", s.values[i], vw);
    for (const std::string& name : samplers) {
      auto p = std::find_if(runs[i].begin(), runs[i].end(), [&](const Point& q) { return q.sampler == name; });
      row += fmt::format("  {:<22}", p == runs[i].end() ? "-" : cell(lines ? p->lines : p->functions));
    }
    end_row(row);
  }
}

// One chart: the values along x, the distance up y (0 to the largest high, at least 0.1),
// a polyline per sampler with a whisker from low to high at each value.
std::string chart(const Sweep& s, const std::vector<std::vector<Point>>& runs, const std::vector<std::string>& samplers,
                  bool lines, const char* title) {
  static const char* kColours[] = {"#1b9e77", "#7570b3", "#e7298a", "#d95f02", "#66a61e", "#e6ab02"};
  const double w = 640, h = 260, left = 56, right = 150, top = 28, bottom = 40;
  double ymax = 0.1;
  for (const auto& run : runs)
    for (const Point& p : run) ymax = std::max(ymax, lines ? p.lines[2] : p.functions[2]);
  auto x = [&](size_t i) { return left + (w - left - right) * (runs.size() < 2 ? 0.5 : double(i) / double(runs.size() - 1)); };
  auto y = [&](double v) { return top + (h - top - bottom) * (1 - v / ymax); };
  std::string svg = fmt::format("<svg xmlns='http://www.w3.org/2000/svg' width='{}' height='{}' font-size='12'>", w, h);
  svg += fmt::format("<text x='{}' y='16' font-weight='bold'>{}</text>", left, title);
  svg += fmt::format("<line x1='{0}' y1='{1}' x2='{0}' y2='{2}' stroke='#999'/><line x1='{0}' y1='{2}' x2='{3}' y2='{2}' "
                     "stroke='#999'/>", left, top, h - bottom, w - right);
  for (int k = 0; k <= 4; k++) {
    double v = ymax * k / 4;
    svg += fmt::format("<text x='{}' y='{}' text-anchor='end'>{:.2f}</text>", left - 6, y(v) + 4, v);
  }
  for (size_t i = 0; i < runs.size(); i++)
    svg += fmt::format("<text x='{}' y='{}' text-anchor='middle'>{}</text>", x(i), h - bottom + 16,
                       sampler::pages::html_text(s.values[i]));
  svg += fmt::format("<text x='{}' y='{}' text-anchor='middle'>{}</text>", (left + w - right) / 2, h - 6,
                     sampler::pages::html_text(s.flag));
  for (size_t k = 0; k < samplers.size(); k++) {
    const char* colour = kColours[k % std::size(kColours)];
    std::string points;
    for (size_t i = 0; i < runs.size(); i++) {
      auto p = std::find_if(runs[i].begin(), runs[i].end(), [&](const Point& q) { return q.sampler == samplers[k]; });
      if (p == runs[i].end()) continue;
      const double* d = lines ? p->lines : p->functions;
      points += fmt::format("{:.1f},{:.1f} ", x(i), y(d[0]));
      svg += fmt::format("<line x1='{0:.1f}' x2='{0:.1f}' y1='{1:.1f}' y2='{2:.1f}' stroke='{3}'/>", x(i) + 2.0 * double(k),
                         y(d[1]), y(d[2]), colour);
      svg += fmt::format("<circle cx='{:.1f}' cy='{:.1f}' r='3' fill='{}'><title>{} {}: {}</title></circle>", x(i),
                         y(d[0]), colour, samplers[k], sampler::pages::html_text(s.values[i]), cell(d));
    }
    svg += fmt::format("<polyline fill='none' stroke='{}' stroke-width='2' points='{}'/>", colour, points);
    svg += fmt::format("<text x='{}' y='{}' fill='{}'>{}</text>", w - right + 10, top + 16 * double(k + 1), colour,
                       samplers[k]);
  }
  return svg + "</svg>";
}

}  // namespace

std::optional<Sweep> parse_sweep(const CLI::App& compare, const std::string& text, std::string& why) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    why = "write FLAG=V1,V2,..., e.g. --strip-mining=0,64,1024";
    return std::nullopt;
  }
  Sweep s;
  s.flag = text.substr(0, eq);
  if (s.flag.rfind("--", 0) != 0) s.flag = "--" + s.flag;
  const CLI::Option* opt = nullptr;
  for (const CLI::Option* o : compare.get_options())
    if (o->check_lname(s.flag.substr(2))) opt = o;
  bool refused = std::any_of(std::begin(kNotSweepable), std::end(kNotSweepable), [&](const char* n) { return s.flag == n; });
  if (opt == nullptr || refused || opt->get_group().empty() || opt->get_expected_min() == 0) {
    why = fmt::format("{} is not an option of compare that takes a value", s.flag);
    return std::nullopt;
  }
  std::string values = text.substr(eq + 1);
  for (size_t start = 0;;) {
    size_t comma = values.find(',', start);
    std::string v = values.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (v.empty()) {
      why = "a value is empty";
      return std::nullopt;
    }
    s.values.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (s.values.size() < 2) {
    why = "a sweep needs at least two values";
    return std::nullopt;
  }
  return s;
}

std::vector<std::string> arguments_for_each_run(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); i++) {
    const std::string& a = args[i];
    bool own = a == "--sweep" || a == "--html";
    if (own) {
      i++;  // and its value
      continue;
    }
    if (a.rfind("--sweep=", 0) == 0 || a.rfind("--html=", 0) == 0) continue;
    out.push_back(a);
  }
  return out;
}

void compare_sweep(const Sweep& sweep, const std::vector<std::string>& args, const std::string& html) {
  const char* dir = std::getenv("TMPDIR");
  std::string budget = std::string(dir && *dir ? dir : "/tmp") + "/minivm-sweep-XXXXXX";
  int fd = mkstemp(budget.data());
  if (fd < 0) {
    std::fprintf(stderr, "minivm: --sweep: cannot create a temporary file %s\n", budget.c_str());
    std::exit(1);
  }
  close(fd);
  std::vector<std::vector<Point>> runs;
  std::vector<std::string> samplers;
  for (const std::string& v : sweep.values) {
    std::fprintf(stderr, "minivm: --sweep: running with %s=%s\n", sweep.flag.c_str(), v.c_str());
    std::remove(budget.c_str());
    std::vector<Point> points;
    int status = run_one(args, sweep.flag + "=" + v, budget, points);
    if (status == 2) {
      std::fprintf(stderr, "minivm: --sweep: %s=%s was refused (above)\n", sweep.flag.c_str(), v.c_str());
      std::remove(budget.c_str());
      std::exit(2);
    }
    if (points.empty()) {
      std::fprintf(stderr, "minivm: --sweep: the run with %s=%s ended (status %d) without a bias budget: %s\n",
                   sweep.flag.c_str(), v.c_str(), status, "it needs the oracle and samples");
      std::remove(budget.c_str());
      std::exit(1);
    }
    for (const Point& p : points)
      if (std::find(samplers.begin(), samplers.end(), p.sampler) == samplers.end()) samplers.push_back(p.sampler);
    runs.push_back(std::move(points));
  }
  std::remove(budget.c_str());
  std::string out = fmt::format(
      "--sweep {}: one run per value, each sampler's bias budget, its distance from the oracle's profile (total "
      "variation distance; in brackets, where 95% of 200 bootstrap redraws put it: how much sampling alone moves it).\n"
      "By top line:\n",
      sweep.flag);
  write_table(out, sweep, runs, samplers, true);
  out += "By function:\n";
  write_table(out, sweep, runs, samplers, false);
  std::cout << out;
  bool ok = flush_stdout();
  if (!html.empty()) {
    std::string why;
    ok &= sampler::write_output_file("--html", html, why, [&](std::ostream& page) {
      page << "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>minivm compare --sweep "
           << sampler::pages::html_text(sweep.flag) << "</title><style>body{font:14px system-ui,sans-serif;margin:2em;"
           << "color:#222}pre{background:#f6f6f6;padding:1em}</style></head><body><h1>Bias budget against "
           << sampler::pages::html_text(sweep.flag) << "</h1><p>One run of the program per value, every sampler on the same "
           << "interruptions as the oracle. Each point is a sampler's distance from the oracle's profile (the share of "
           << "samples that would have to move for the two to agree); its whisker, where 95% of 200 bootstrap redraws "
           << "of both profiles put it. Hover a point for its numbers.</p>"
           << chart(sweep, runs, samplers, true, "by top line") << chart(sweep, runs, samplers, false, "by function")
           << "<pre>" << sampler::pages::html_text(out) << "</pre></body></html>\n";
    });
    if (!why.empty()) std::fprintf(stderr, "minivm: %s\n", why.c_str());
  }
  std::exit(ok ? 0 : 1);
}

}  // namespace cli
