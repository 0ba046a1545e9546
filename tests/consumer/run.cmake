# Installs kerascpp into a scratch prefix, then configures, builds and runs a user's project
# (SOURCE_DIR) against it. EXECUTABLE names the program to run, relative to the project's build
# directory (default: consumer, tests/consumer's).
file(REMOVE_RECURSE ${WORK_DIR})
if(NOT DEFINED EXECUTABLE)
  set(EXECUTABLE consumer)
endif()
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}")
  endif()
endfunction()
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix
    -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/${EXECUTABLE})
