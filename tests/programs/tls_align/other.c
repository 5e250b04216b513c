__thread short other_tls = 321;
