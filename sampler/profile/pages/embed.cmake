# Embeds the profile's web pages into one C++ source, at build time:
#   cmake -DPAGES_DIR=<this folder> -DOUTPUT=<file.cpp> -DPAGES="flame;compare" -P embed.cmake
# Each NAME.html has its stylesheet (<link rel="stylesheet" href="NAME.css">) and its script
# (<script src="NAME.js"></script>) inlined, so the page a report writes is one file that
# needs no network, and becomes `sampler::pages::kNAME_page` (sampler/profile/pages.h).
# A page must keep the two slots the writers fill (pages.cpp): an empty <title></title> and
# one empty <script type="application/json" id="..."></script>; without them the build stops.
set(delimiter "PAGE")

# Stops the build unless `html` (page `name`) contains `text`.
function(require_in name html text why)
  string(FIND "${html}" "${text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${name}.html: no ${text} ${why}")
  endif()
endfunction()

# Replaces `tag` in the variable `html_var` with `inline`.
function(inline_part name html_var tag inline)
  require_in("${name}" "${${html_var}}" "${tag}" "to inline")
  string(REPLACE "${tag}" "${inline}" replaced "${${html_var}}")
  set(${html_var} "${replaced}" PARENT_SCOPE)
endfunction()

set(out "// Generated at build time by sampler/profile/pages/embed.cmake from sampler/profile/pages/.\n")
string(APPEND out "#include \"sampler/profile/pages.h\"\n\nnamespace sampler::pages {\n")
foreach(name IN LISTS PAGES)
  file(READ "${PAGES_DIR}/${name}.html" html)
  file(READ "${PAGES_DIR}/${name}.css" css)
  file(READ "${PAGES_DIR}/${name}.js" js)
  inline_part("${name}" html "<link rel=\"stylesheet\" href=\"${name}.css\">" "<style>\n${css}</style>")
  inline_part("${name}" html "<script src=\"${name}.js\"></script>" "<script>\n${js}</script>")
  require_in("${name}" "${html}" "<title></title>" "for the writer to fill")
  string(REGEX MATCH "<script type=\"application/json\" id=\"[a-z-]+\"></script>" data_slot "${html}")
  if(NOT data_slot)
    message(FATAL_ERROR "${name}.html: no empty <script type=\"application/json\" id=...></script> for the data")
  endif()
  string(FIND "${html}" ")${delimiter}\"" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "${name}: the page contains )${delimiter}\", which ends the C++ raw string")
  endif()
  string(APPEND out "\nextern const std::string_view k${name}_page;\n")
  string(APPEND out "const std::string_view k${name}_page = R\"${delimiter}(${html})${delimiter}\";\n")
endforeach()
string(APPEND out "\n}  // namespace sampler::pages\n")
file(WRITE "${OUTPUT}" "${out}")
