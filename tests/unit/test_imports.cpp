// Unit tests of programs of several files (vm/frontend.h, `import "path.mini";`): which
// files are read, how often, what each function's file is, and which file an error names.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "vm/frontend.h"

namespace {

// Files in memory; records every path read, in order.
struct Files {
  std::map<std::string, std::string> text;
  std::vector<std::string> reads;
  vm::SourceReader reader() {
    return [this](const std::string& path, std::string& out, std::string& error) {
      reads.push_back(path);
      auto it = text.find(path);
      if (it == text.end()) {
        error = "cannot open '" + path + "': No such file or directory";
        return false;
      }
      out = it->second;
      return true;
    };
  }
};

const vm::Function* function(const vm::Module& m, const std::string& name) {
  for (auto& f : m.functions)
    if (f->name == name) return f.get();
  return nullptr;
}

}  // namespace

TEST_CASE("an imported file's declarations join the program, each function keeps its file") {
  Files fs;
  fs.text["dir/lib/util.mini"] = "var base: int = 40;\n\nfn twice(x: int): int { return 2 * x; }\n";
  fs.text["dir/shapes.mini"] =
      "import \"lib/util.mini\";\n"
      "class Box { var w: int; fn init(w: int) { this.w = w; } fn area(): int { return twice(w); } }\n";
  vm::CompileError e;
  auto m = vm::compile_source("dir/main.mini",
                              "import \"shapes.mini\";\nimport \"lib/util.mini\";\n"
                              "fn main(): int { return new Box(1).area() + base; }\n",
                              e, fs.reader());
  REQUIRE(m != nullptr);
  CHECK(m->files == std::vector<std::string>{"dir/main.mini", "dir/shapes.mini", "dir/lib/util.mini"});
  // Each file is read once, though two files import util.mini.
  CHECK(fs.reads == std::vector<std::string>{"dir/shapes.mini", "dir/lib/util.mini"});
  REQUIRE(function(*m, "twice") != nullptr);
  CHECK(m->file_of(*function(*m, "twice")) == "dir/lib/util.mini");
  CHECK(function(*m, "twice")->line == 3);
  CHECK(m->file_of(*function(*m, "Box.area")) == "dir/shapes.mini");
  CHECK(m->file_of(*function(*m, "main")) == "dir/main.mini");
}

TEST_CASE("an import cycle reads each file once") {
  Files fs;
  fs.text["a.mini"] = "import \"b.mini\";\nfn a(): int { return 1; }\n";
  fs.text["b.mini"] = "import \"a.mini\";\nimport \"./b.mini\";\nfn b(): int { return 2; }\n";
  vm::CompileError e;
  auto m = vm::compile_source("main.mini", "import \"a.mini\";\nfn main(): int { return a() + b(); }\n", e,
                              fs.reader());
  REQUIRE(m != nullptr);
  CHECK(fs.reads == std::vector<std::string>{"a.mini", "b.mini"});
  // The program importing itself is no second copy of it either.
  fs.text["self.mini"] = "import \"self.mini\";\nfn main(): int { return 0; }\n";
  auto self = vm::compile_source("self.mini", fs.text["self.mini"], e, fs.reader());
  REQUIRE(self != nullptr);
  CHECK(self->files.size() == 1);
}

TEST_CASE("an error in an imported file names that file, line and column") {
  Files fs;
  fs.text["lib.mini"] = "fn f(): int {\n  return true;\n}\n";
  vm::CompileError e;
  auto m = vm::compile_source("main.mini", "import \"lib.mini\";\nfn main(): int { return f(); }\n", e, fs.reader());
  REQUIRE(m == nullptr);
  CHECK(e.file == "lib.mini");
  CHECK(e.line == 2);
  CHECK(e.col == 10);  // `true`

  fs.text["syntax.mini"] = "fn g( {}\n";
  m = vm::compile_source("main.mini", "import \"syntax.mini\";\nfn main(): int { return 0; }\n", e, fs.reader());
  REQUIRE(m == nullptr);
  CHECK(e.file == "syntax.mini");
  CHECK(e.line == 1);

  // A name declared in two files: the second declaration is the error, in its file.
  fs.text["dup.mini"] = "\n\nfn main(): int { return 1; }\n";
  m = vm::compile_source("main.mini", "import \"dup.mini\";\nfn main(): int { return 0; }\n", e, fs.reader());
  REQUIRE(m == nullptr);
  CHECK(e.file == "dup.mini");
  CHECK(e.line == 3);
  CHECK(e.message == "function 'main' is already defined at main.mini:2");
}

TEST_CASE("a missing import, a late import and a program read from no file are errors at the import") {
  Files fs;
  vm::CompileError e;
  auto m = vm::compile_source("main.mini", "fn main(): int { return 0; }\nimport \"none.mini\";\n", e, fs.reader());
  REQUIRE(m == nullptr);
  CHECK(e.file == "main.mini");
  CHECK(e.line == 2);
  CHECK(e.message == "an import must come before the file's declarations");

  m = vm::compile_source("d/main.mini", "\nimport \"none.mini\";\nfn main(): int { return 0; }\n", e, fs.reader());
  REQUIRE(m == nullptr);
  CHECK(e.file == "d/main.mini");
  CHECK(e.line == 2);
  CHECK(e.col == 8);
  CHECK(e.message == "cannot import \"none.mini\": cannot open 'd/none.mini': No such file or directory");

  m = vm::compile_source("main.mini", "import \"lib.mini\";\nfn main(): int { return 0; }\n", e);
  REQUIRE(m == nullptr);
  CHECK(e.message == "this program cannot import files (it was not read from one)");

  // `import` is a name like any other where no string follows it at top level.
  m = vm::compile_source("main.mini", "fn import(): int { return 3; }\nfn main(): int { var import = import(); return import; }\n", e);
  CHECK(m != nullptr);
}
