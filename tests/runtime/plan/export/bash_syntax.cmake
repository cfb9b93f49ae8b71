# Writes one launch script with the CLI and checks it with `bash -n`.
execute_process(COMMAND ${EXE} export --format ${FORMAT} --out ${OUT} RESULT_VARIABLE code ERROR_VARIABLE err)
if(NOT code EQUAL 0)
    message(FATAL_ERROR "export --format ${FORMAT} failed (${code}): ${err}")
endif()
execute_process(COMMAND bash -n ${OUT} RESULT_VARIABLE code ERROR_VARIABLE err)
if(NOT code EQUAL 0)
    message(FATAL_ERROR "bash -n ${OUT} failed: ${err}")
endif()
