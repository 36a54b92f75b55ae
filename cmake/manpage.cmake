# manpage.cmake - builds topsim.1 with help2man from `topsim --help` and
# `topsim --version`, plus a COMMANDS section holding every command's own
# --help verbatim (no-fill), so the man page never drifts from the binary.
# Run as: cmake -DTOPSIM=bin -DHELP2MAN=help2man -DOUT=topsim.1 -P manpage.cmake
execute_process(COMMAND ${TOPSIM} --help OUTPUT_VARIABLE top RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "topsim --help failed (${rc})")
endif()
# Command names are the indented first words of the "commands:" block.
string(REGEX MATCH "commands:\n(([ ]+[a-z]+[^\n]*\n)+)" block "${top}")
string(REGEX MATCHALL "\n  [a-z]+" names "\n${CMAKE_MATCH_1}")
set(inc "[COMMANDS]\n")
foreach(n IN LISTS names)
  string(STRIP "${n}" n)
  execute_process(COMMAND ${TOPSIM} ${n} --help OUTPUT_VARIABLE h RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "topsim ${n} --help failed (${rc})")
  endif()
  # roff: escape backslashes; protect lines that start with . or '.
  string(REPLACE "\\" "\\e" h "${h}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" h "${h}")
  string(APPEND inc ".SS topsim ${n}\n.nf\n${h}.fi\n")
endforeach()
string(APPEND inc "[SEE ALSO]\nThe full reference is docs/cli.md in the topsim sources.\n")
get_filename_component(dir ${OUT} DIRECTORY)
file(WRITE ${dir}/topsim-man-include.txt "${inc}")
execute_process(COMMAND ${HELP2MAN} --no-info --section=1
    "--name=topology-aware discrete-event GPU-cluster simulator"
    --include=${dir}/topsim-man-include.txt --output=${OUT} ${TOPSIM}
    RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man failed (${rc})")
endif()
