# Writes the man page rsz(1) with help2man: -DRSZ=<the binary> -DHELP2MAN=<help2man> -DOUT=<rsz.1>. help2man turns
# `rsz --help` and `rsz --version` into the page; the COMMANDS section adds `rsz <command> --help` of every
# subcommand, escaped for roff. The binary runs as "rsz" (through PATH), so the page shows that name.
get_filename_component(dir ${RSZ} DIRECTORY)
get_filename_component(out_dir ${OUT} DIRECTORY)
set(include_file ${out_dir}/rsz.h2m)
set(text "[COMMANDS]\n")
foreach(command resample thumbnail upsample roi-align run plan merge info)
  execute_process(COMMAND ${RSZ} ${command} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${RSZ} ${command} --help failed")
  endif()
  string(REPLACE "\\" "\\e" help "${help}")
  string(REPLACE "-" "\\-" help "${help}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")
  string(REPLACE "${RSZ}" "rsz" help "${help}")
  string(APPEND text ".SS \"rsz ${command}\"\n.nf\n${help}.fi\n")
endforeach()
string(APPEND text "[SEE ALSO]\nThe README of the rsz sources and its manual in docs/: SEMANTICS.md (the operator contract), CLI.md, LIMITS.md\n(limits and failures), PYTHON.md (the Python module).\n")
file(WRITE ${include_file} "${text}")
execute_process(COMMAND ${CMAKE_COMMAND} -E env "PATH=${dir}:$ENV{PATH}"
                        ${HELP2MAN} --no-info --section 1 --name "resize images and tensors, cut ROI crops (DirectML RESAMPLE1, UPSAMPLE_2D, ROI_ALIGN)"
                        --include ${include_file} --output ${OUT} rsz
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man failed: ${err}")
endif()
