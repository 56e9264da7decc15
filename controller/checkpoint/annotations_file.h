#pragma once

// A pod's annotations as the downward API shows them in a volume file (fieldRef
// metadata.annotations). The kubelet writes one `key="value"` line per annotation, sorted by key,
// the value quoted as Go's strconv.Quote does (%q), and no newline after the last line. It
// updates the file by writing a new directory and swapping the `..data` symlink the file's path
// goes through, so a reader opens the path afresh each time and never keeps it open.

#include <map>
#include <string>
#include <string_view>

#include "rota/admission/status.h"

namespace rota::checkpoint {

using Annotations = std::map<std::string, std::string>;

// Parses the file's text. An error names the line and what was wrong with it.
Result<Annotations> ParseAnnotations(std::string_view text);

// Go's strconv.Unquote of a double-quoted literal (the quotes included): escapes \a \b \f \n \r
// \t \v \\ \" \xhh \ooo (bytes) and \uhhhh \Uhhhhhhhh (runes, written as UTF-8).
Result<std::string> UnquoteGo(std::string_view quoted);

// Opens `path` and parses it. kNotFound when it does not exist (yet); an error names the path.
Result<Annotations> ReadAnnotationsFile(const std::string& path);

}  // namespace rota::checkpoint
