"""Editor drafts: the code a learner is writing, kept on the server per problem."""
