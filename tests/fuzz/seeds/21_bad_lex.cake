kernel k target sm_90a $ ; ` 99999999999999999999 12ab 0x 1e999
  role r warps 0..1 €
{ in r { x = a & b . c } }
/* unterminated
