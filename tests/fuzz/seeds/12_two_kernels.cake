kernel one target sm_90a role r warps 0..0 { in r { sync } }
kernel two target sm_100a role r warps 0..0 { in r { sync r } }
