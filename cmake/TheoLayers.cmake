# One static library per layer of the library (docs/architecture.md), linked downward only.
#
# A layer sees only its own headers and those of the layers it links: each layer gets an include
# root of its own in the build tree, ${THEO_LAYER_ROOT}/<layer>/, holding symbolic links to its
# public headers (include/theo/<...>) and to its source folders (src/<...>, for the headers
# internal to the library). Linking a layer passes its root on to the layers above it, never
# below, so an #include of a higher layer's header does not compile. The installed library keeps
# the one include/ tree.
#
# theo_add_layer(<layer>
#                SOURCES <files...>              sources compiled into theo_<layer>
#                [HEADERS <paths...>]           below include/ (a folder or a file), e.g. theo/ring
#                [SOURCE_DIRS <paths...>]       below src/ (a folder or a file), e.g. backend/cpu
#                [DEPENDS <layers...>]          the layers directly below it that it uses
#                [PUBLIC_LIBS <targets...>] [PRIVATE_LIBS <targets...>])
# makes the static library theo_<layer> (output libtheodosian_<layer>.a) and appends it to the
# global property THEO_LAYERS, in the order layers were added.

set(THEO_LAYER_ROOT ${CMAKE_BINARY_DIR}/layers)

# theo_add_sources(<list> <files...>) appends <files...>, named relative to the folder of the
# sources.cmake that calls it, to the list variable <list> (e.g. THEO_SOURCES).
function(theo_add_sources list)
  list(TRANSFORM ARGN PREPEND ${CMAKE_CURRENT_LIST_DIR}/ OUTPUT_VARIABLE files)
  set(${list} ${${list}} ${files} PARENT_SCOPE)
endfunction()

function(theo_layer_link root rel target)
  set(link ${root}/${rel})
  get_filename_component(parent ${link} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  if(IS_SYMLINK ${link})
    file(REMOVE ${link})  # the link only, never what it points to
  endif()
  file(CREATE_LINK ${target} ${link} SYMBOLIC)
endfunction()

function(theo_add_layer layer)
  cmake_parse_arguments(L "" "" "SOURCES;HEADERS;SOURCE_DIRS;DEPENDS;PUBLIC_LIBS;PRIVATE_LIBS"
                        ${ARGN})
  set(target theo_${layer})
  set(root ${THEO_LAYER_ROOT}/${layer})
  file(MAKE_DIRECTORY ${root})
  foreach(h IN LISTS L_HEADERS)
    theo_layer_link(${root} ${h} ${PROJECT_SOURCE_DIR}/include/${h})
  endforeach()
  foreach(d IN LISTS L_SOURCE_DIRS)
    theo_layer_link(${root} ${d} ${PROJECT_SOURCE_DIR}/src/${d})
  endforeach()

  add_library(${target} STATIC ${L_SOURCES})
  add_library(theodosian::${layer} ALIAS ${target})
  set_target_properties(${target} PROPERTIES OUTPUT_NAME theodosian_${layer} EXPORT_NAME ${layer})
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${root}>
                                              $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  foreach(dep IN LISTS L_DEPENDS)
    target_link_libraries(${target} PUBLIC theo_${dep})
  endforeach()
  target_link_libraries(${target} PUBLIC ${L_PUBLIC_LIBS} PRIVATE ${L_PRIVATE_LIBS})
  theo_target_warnings(${target})
  set_property(GLOBAL APPEND PROPERTY THEO_LAYERS ${target})
endfunction()
