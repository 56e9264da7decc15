# Layering rules, checked when CMake configures the project.
#
#   rota_forbid_links(<target> <pattern>...)  <target> must not link, directly or through its
#                                             dependencies, any library matching a pattern
#   rota_check_layering()                     evaluates every rule; call once, at the end
#
# Patterns are regular expressions matched against link items (targets or file names), e.g.
# "CURL" or "spdlog". The include-level twin of this check is the ctest `layering.includes`.

set_property(GLOBAL PROPERTY ROTA_LAYERING_RULES "")

function(rota_forbid_links target)
  foreach(pattern IN LISTS ARGN)
    set_property(GLOBAL APPEND PROPERTY ROTA_LAYERING_RULES "${target}|${pattern}")
  endforeach()
endfunction()

# Collects every link item reachable from <target> into <out>.
function(_rota_link_closure target out)
  set(seen "")
  set(todo ${target})
  while(todo)
    list(POP_FRONT todo item)
    if(item IN_LIST seen)
      continue()
    endif()
    list(APPEND seen ${item})
    if(TARGET ${item})
      get_target_property(libs ${item} LINK_LIBRARIES)
      get_target_property(ilibs ${item} INTERFACE_LINK_LIBRARIES)
      foreach(lib IN LISTS libs ilibs)
        if(lib AND NOT lib MATCHES "-NOTFOUND$" AND NOT lib MATCHES "^\\$<")
          list(APPEND todo ${lib})
        endif()
      endforeach()
    endif()
  endwhile()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

function(rota_check_layering)
  get_property(rules GLOBAL PROPERTY ROTA_LAYERING_RULES)
  foreach(rule IN LISTS rules)
    string(REPLACE "|" ";" parts "${rule}")
    list(GET parts 0 target)
    list(GET parts 1 pattern)
    _rota_link_closure(${target} closure)
    foreach(item IN LISTS closure)
      if(NOT item STREQUAL target AND item MATCHES "${pattern}")
        message(FATAL_ERROR
          "layering: ${target} must not depend on '${pattern}', but it links ${item}. "
          "See docs/architecture.md for which layer may use what.")
      endif()
    endforeach()
  endforeach()
endfunction()
