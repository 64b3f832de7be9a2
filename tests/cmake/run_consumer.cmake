# Builds and runs a consumer project: MODE=find_package installs the build
# tree under test (BUILD_DIR) into a prefix first, so the export is checked
# without compiling the library again; MODE=add_subdirectory adds the source
# tree and builds only what the consumer links.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGV}")
  endif()
endfunction()
set(gen -G Ninja)
if(MODE STREQUAL "find_package")
  run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
  run(${CMAKE_COMMAND} ${gen} -S ${SOURCE_DIR}/tests/cmake/find_package -B ${WORK_DIR}/app
      -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
else()
  run(${CMAKE_COMMAND} ${gen} -S ${SOURCE_DIR}/tests/cmake/add_subdirectory -B ${WORK_DIR}/app
      -DLLMROOF_SOURCE_DIR=${SOURCE_DIR})
endif()
run(${CMAKE_COMMAND} --build ${WORK_DIR}/app --target consumer)
run(${WORK_DIR}/app/consumer)
