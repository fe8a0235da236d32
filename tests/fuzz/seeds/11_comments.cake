/* leading block
   comment */
kernel c target sm_90a   # trailing on header
  role r warps 0..0  /* inline */ # and another

  # a blank line above
{
  in r {   # open
    # own line
    fence proxy_async   # fence
    fence cta
    fence gpu
  } # close
}
# at the end
