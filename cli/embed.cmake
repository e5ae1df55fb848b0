# embed.cmake - turns the file IN into a C array in OUT:
#   const char tt_bundled_model[]; const unsigned long tt_bundled_model_len;
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
file(WRITE ${OUT}
  "/* generated from ${IN}; do not edit */\n"
  "extern const char tt_bundled_model[];\n"
  "extern const unsigned long tt_bundled_model_len;\n"
  "const char tt_bundled_model[] = {${body} 0};\n"
  "const unsigned long tt_bundled_model_len = ${len};\n")
