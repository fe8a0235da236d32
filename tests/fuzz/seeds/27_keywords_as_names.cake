kernel k target sm_90a
  role load warps 0..0
  role mma warps 1..1
  pipeline in stages 2
  barrier wait producers load consumers mma arrivals 1
  frag f: f32[4] in mma
{
  in mma { sync mma  wait wait }
}
