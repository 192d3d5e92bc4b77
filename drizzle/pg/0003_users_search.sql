CREATE TABLE "user_search" (
	"project_id" integer NOT NULL,
	"user_id" text NOT NULL,
	"part" text NOT NULL,
	"words" text NOT NULL,
	"search" "tsvector" GENERATED ALWAYS AS (array_to_tsvector(string_to_array(words, ' '))) STORED,
	CONSTRAINT "user_search_project_id_user_id_part_pk" PRIMARY KEY("project_id","user_id","part")
);
--> statement-breakpoint
ALTER TABLE "user_search" ADD CONSTRAINT "user_search_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "user_search_words" ON "user_search" USING gin ("search");