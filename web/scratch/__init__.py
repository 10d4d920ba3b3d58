"""The scratch cell: the learner's code on inputs they write, in the sandbox, never scored."""
