// What every catalog (devices, models) promises of its entries.
#pragma once

#include <doctest/doctest.h>

#include <set>
#include <string>

/// Ids unique, lowercase, hyphenated (letters, digits, '-', '.'), and each
/// entry sourced; `more` checks the rest of one entry.
template <class Range, class More>
void check_catalog_entries(const Range& entries, More more) {
  std::set<std::string> ids;
  for (const auto& e : entries) {
    CAPTURE(e.id);
    CHECK(ids.insert(e.id).second);
    for (char c : e.id) CHECK(((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'));
    CHECK_FALSE(e.source.empty());
    more(e);
  }
}
