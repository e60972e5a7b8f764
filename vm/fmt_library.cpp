// fmt's compiled part (what libfmt.so holds), built here from Debian's libfmt-dev headers
// so that minivm links it statically: libfmt.so needs libstdc++.so, and loading and
// binding that shared library cost every start of minivm about 2 ms, a quarter of an
// empty program's run (bench/vm/README.md, "Reading the table"). Every other file
// includes <fmt/format.h> as usual, which declares these definitions `extern`; the
// sanitizer builds link libfmt.so instead and do not build this file (CMakeLists.txt).
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

// The definitions format.h declares `extern template`, for char and wchar_t.
template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;
template FMT_API void buffer<char>::append(const char*, const char*);
template FMT_API void buffer<wchar_t>::append(const wchar_t*, const wchar_t*);

}  // namespace detail
FMT_END_NAMESPACE
