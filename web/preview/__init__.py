"""`judge preview DIR`: the problem page of packages under work, as learners will see it, served
on loopback to their author with a banner, judging the files as they are now and reloading the
open page when a file changes."""
