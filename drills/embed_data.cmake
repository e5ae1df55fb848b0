# embed_data.cmake - turns the file IN into a C array in OUT:
#   const char SYM[]; const unsigned long SYM_len;
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
file(WRITE ${OUT}
  "/* generated from ${IN}; do not edit */\n"
  "extern const char ${SYM}[];\n"
  "extern const unsigned long ${SYM}_len;\n"
  "const char ${SYM}[] = {${body} 0};\n"
  "const unsigned long ${SYM}_len = ${len};\n")
